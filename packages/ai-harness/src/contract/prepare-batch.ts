import { utf8Length } from '../json/check-json.js'
import { HarnessError, RecordTooLargeError } from './errors.js'
import { checkRecords, type RecordRules } from './record-checks.js'
import { MIN_STORE_LIMITS, maxLogIdBytesOf } from './store-limits.js'
import type { AppendOptions, LogRecord, StoreLimits } from './types.js'

/** A batch checked against a store's limits, with each record's JSON text. */
export interface PreparedBatch {
  /** `JSON.stringify` of each record, in order. */
  readonly json: string[]
  /** Sum of the records' UTF-8 sizes. */
  readonly bytes: number
}

/**
 * The one place that refuses what no store may keep; every store calls it (or
 * {@link prepareAppend}) before it writes a byte. Each record must be a plain JSON object
 * with a string `type` (`RECORD_INVALID`), hold only JSON values (`RECORD_NOT_JSON`), and
 * fit the store's declared `maxRecordBytes`; the batch must fit `maxBatchBytes` and
 * `maxBatchRecords` (`RECORD_TOO_LARGE`). Returns each record's JSON text: keep that text
 * (it keeps lone surrogates as `\ud800` escapes, `-0` as `0`, and is a copy the caller
 * cannot change afterwards).
 */
export function prepareBatch(records: readonly LogRecord[], limits: StoreLimits): PreparedBatch {
  const json: string[] = []
  let bytes = 0
  checkRecords(records, storeRecordRules(limits), (record, root) => {
    const text = JSON.stringify(record)
    const size = utf8Length(text)
    if (size > limits.maxRecordBytes) {
      throw new RecordTooLargeError(root, size, limits.maxRecordBytes, { name: 'maxRecordBytes', minimum: MIN_STORE_LIMITS.maxRecordBytes })
    }
    bytes += size
    json.push(text)
  })
  if (bytes > limits.maxBatchBytes) {
    throw new RecordTooLargeError('The batch', bytes, limits.maxBatchBytes, {
      name: 'maxBatchBytes',
      minimum: MIN_STORE_LIMITS.maxBatchBytes,
    })
  }
  return { json, bytes }
}

/** A store's words for the record checks; the batch's count limit comes before any record. */
function storeRecordRules(limits: StoreLimits): RecordRules {
  return {
    notArray: 'append takes an array of records; wrap a single record in [ ].',
    example: "{ type: 'app.note', ... }",
    batch(records) {
      if (limits.maxBatchRecords !== undefined && records.length > limits.maxBatchRecords) {
        throw new RecordTooLargeError(`A batch of ${records.length} records`, records.length, limits.maxBatchRecords, {
          name: 'maxBatchRecords',
          unit: 'records',
          minimum: MIN_STORE_LIMITS.maxBatchRecords,
        })
      }
    },
    // A store's errors carry no path: the message names the record.
    error: (code, message) => new HarnessError(code, message),
  }
}

/**
 * Every check of an `append` call in one step, before the store writes anything: the log
 * id ({@link assertLogId} with the store's declared `maxLogIdBytes`), the expected seq
 * ({@link assertExpectedSeq}), the lease option's shape, and the records
 * ({@link prepareBatch}). An empty batch comes back with no records: write nothing.
 */
export function prepareAppend(
  logId: unknown,
  expectedSeq: unknown,
  records: readonly LogRecord[],
  limits: StoreLimits,
  options?: AppendOptions,
): PreparedBatch {
  assertLogId(logId, limits)
  assertExpectedSeq(expectedSeq)
  if (options?.lease !== undefined) assertLease(options.lease, logId)
  return prepareBatch(records, limits)
}

/** A lease passed to a store: an object of this session with a string owner and a whole fence. */
export function assertLease(lease: unknown, logId?: string): void {
  const l = lease as { logId?: unknown; owner?: unknown; fence?: unknown } | null
  if (
    typeof l !== 'object' ||
    l === null ||
    typeof l.owner !== 'string' ||
    typeof l.fence !== 'number' ||
    !Number.isSafeInteger(l.fence) ||
    (logId !== undefined && l.logId !== logId)
  ) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `A lease must be the object leases.acquire returned for this session${logId === undefined ? '' : ` (${JSON.stringify(logId)})`}: { logId, owner, fence, expiresAt }.`,
    )
  }
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
  const max = maxLogIdBytesOf(limits)
  const bytes = utf8Length(logId)
  if (bytes > max) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `A log id is ${bytes} bytes of UTF-8, over this store's limit of ${max} (its declared limits.maxLogIdBytes). Use a shorter id, such as a UUID.`,
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
