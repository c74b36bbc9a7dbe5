import { findNonJson, utf8Length } from '../json/check-json.js'
import { HarnessError, RecordTooLargeError } from './errors.js'
import { DEFAULT_MAX_LOG_ID_BYTES, type LogRecord, type StoreLimits } from './types.js'

/** A batch checked against a store's limits, with each record's JSON text. */
export interface PreparedBatch {
  /** `JSON.stringify` of each record, in order. */
  readonly json: string[]
  /** Sum of the records' UTF-8 sizes. */
  readonly bytes: number
}

/**
 * What every store does before writing: each record is a plain JSON object with a
 * string `type`, no record is over `maxRecordBytes`, the batch is not over
 * `maxBatchBytes` or `maxBatchRecords`. Throws a typed error before anything is written.
 */
export function prepareBatch(records: readonly LogRecord[], limits: StoreLimits): PreparedBatch {
  if (!Array.isArray(records)) {
    throw new HarnessError('RECORD_INVALID', 'append takes an array of records; wrap a single record in [ ].')
  }
  if (limits.maxBatchRecords !== undefined && records.length > limits.maxBatchRecords) {
    throw new RecordTooLargeError(`A batch of ${records.length} records`, records.length, limits.maxBatchRecords)
  }
  const json: string[] = []
  let bytes = 0
  records.forEach((record, index) => {
    const root = `records[${index}]`
    if (typeof record !== 'object' || record === null || Array.isArray(record) || typeof record.type !== 'string') {
      throw new HarnessError('RECORD_INVALID', `${root} must be an object with a string "type", like { type: 'app.note', ... }.`)
    }
    const bad = findNonJson(record, { root })
    if (bad) throw new HarnessError('RECORD_NOT_JSON', `${bad.path}: ${bad.reason}.`)
    const text = JSON.stringify(record)
    const size = utf8Length(text)
    if (size > limits.maxRecordBytes) throw new RecordTooLargeError(root, size, limits.maxRecordBytes)
    bytes += size
    json.push(text)
  })
  if (bytes > limits.maxBatchBytes) throw new RecordTooLargeError('The batch', bytes, limits.maxBatchBytes)
  return { json, bytes }
}

/** True when `text` is well-formed UTF-16: every surrogate is half of a pair. */
export function isWellFormedText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0xd800 || unit > 0xdfff) continue
    if (unit > 0xdbff) return false
    const next = text.charCodeAt(i + 1)
    if (!(next >= 0xdc00 && next <= 0xdfff)) return false
    i++
  }
  return true
}

/**
 * Checks a log id (a session id): a non-empty string of well-formed Unicode without
 * NUL, at most `maxLogIdBytes` of UTF-8. Stores keep ids as exact strings; ids they
 * could not keep exactly (a lone surrogate becomes U+FFFD in UTF-8; NUL ends a C
 * string) are refused here, before any store sees them.
 */
export function assertLogId(logId: unknown, limits?: Pick<StoreLimits, 'maxLogIdBytes'>): asserts logId is string {
  if (typeof logId !== 'string' || logId.length === 0) {
    throw new HarnessError('INVALID_ARGUMENT', 'A log id must be a non-empty string (the session id).')
  }
  if (logId.includes('\u0000')) {
    throw new HarnessError('INVALID_ARGUMENT', 'A log id must not contain NUL (U+0000); use printable text such as a UUID.')
  }
  if (!isWellFormedText(logId)) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      'A log id must be well-formed Unicode: it holds a lone surrogate (half of a UTF-16 pair), which stores cannot keep exactly. Build ids from whole characters.',
    )
  }
  const max = limits?.maxLogIdBytes ?? DEFAULT_MAX_LOG_ID_BYTES
  const bytes = utf8Length(logId)
  if (bytes > max) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `A log id is ${bytes} bytes of UTF-8, over this store's limit of ${max} (limits.maxLogIdBytes). Use a shorter id, such as a UUID.`,
    )
  }
}

export function assertExpectedSeq(expectedSeq: unknown): asserts expectedSeq is number {
  if (typeof expectedSeq !== 'number' || !Number.isSafeInteger(expectedSeq) || expectedSeq < 1) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `expectedSeq must be an integer >= 1 (the next free seq; 1 for an empty log), not ${String(expectedSeq)}.`,
    )
  }
}
