import { findNonJson } from '../json/check-json.js'
import type { HarnessErrorCode } from './errors.js'
import type { LogRecord } from './types.js'

/**
 * How a caller of {@link checkRecords} words and raises its errors: a store's append
 * (through `prepareBatch`) and a tool's `append` check the same things, each in words
 * that fit its own caller.
 */
export interface RecordRules {
  /** The message when the records are not an array. */
  readonly notArray: string
  /** The record a `RECORD_INVALID` message shows as an example, e.g. `{ type: 'app.note', ... }`. */
  readonly example: string
  /** Refuse an empty `type` too (a tool's records: an app's type names what it logs). */
  readonly nonEmptyType?: boolean
  /** Checks of the batch as a whole, once it is known to be an array. */
  readonly batch?: (records: readonly LogRecord[]) => void
  /** Checks of a record's type, before its values are checked. */
  readonly type?: (type: string, root: string) => void
  /** The error to throw; `path` is where in the batch the fault is, when one record has it. */
  readonly error: (code: HarnessErrorCode, message: string, path?: string) => Error
}

/**
 * The checks every appended record gets: the records are an array, and each is a plain
 * object with a string `type` (`RECORD_INVALID`) that holds only JSON values
 * (`RECORD_NOT_JSON`). `each` runs on a record once it passed, before the next is
 * checked, so the first faulty record in the batch decides the error.
 */
export function checkRecords(records: readonly LogRecord[], rules: RecordRules, each: (record: LogRecord, root: string) => void): void {
  if (!Array.isArray(records)) throw rules.error('RECORD_INVALID', rules.notArray)
  rules.batch?.(records)
  records.forEach((record, index) => {
    const root = `records[${index}]`
    if (
      typeof record !== 'object' ||
      record === null ||
      Array.isArray(record) ||
      typeof record.type !== 'string' ||
      (rules.nonEmptyType === true && record.type === '')
    ) {
      throw rules.error('RECORD_INVALID', `${root} must be an object with a string "type", like ${rules.example}.`, root)
    }
    rules.type?.(record.type, root)
    const bad = findNonJson(record, { root })
    if (bad) throw rules.error('RECORD_NOT_JSON', `${bad.path}: ${bad.reason}.`, bad.path)
    each(record, root)
  })
}
