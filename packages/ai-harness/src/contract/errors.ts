/**
 * Every refusal in the harness is a `HarnessError` with a stable `code`.
 * Match on `code` (or `instanceof` the family class), never on the message:
 * messages explain what to do instead and may be reworded.
 */
export type HarnessErrorCode =
  | 'LOG_CONFLICT'
  | 'RECORD_TOO_LARGE'
  | 'RECORD_INVALID'
  | 'RECORD_TYPE_RESERVED'
  | 'RECORD_NOT_JSON'
  | 'RECORD_SECRET'
  | 'LEASE_HELD'
  | 'LEASE_LOST'
  | 'STEP_NOT_JSON'
  | 'STEP_DUPLICATE_NAME'
  | 'STEP_SECRET'
  | 'STEP_TOO_LARGE'
  | 'STEP_FAILED'
  | 'STEP_OUTCOME_UNKNOWN'
  | 'CALL_ROLLED_BACK'
  | 'TOOL_TIMEOUT'
  | 'TOOL_CALL_SETTLED'
  | 'NOT_IN_DURABLE_SESSION'
  | 'ANSWER_INVALID'
  | 'ALREADY_ANSWERED'
  | 'QUESTION_NOT_FOUND'
  | 'ALREADY_DECIDED'
  | 'APPROVAL_NOT_FOUND'
  | 'SECRET_TOO_SHORT'
  | 'SECRET_NOT_FOUND'
  | 'SECRET_AMBIGUOUS'
  | 'TOOL_NOT_FOUND'
  | 'SESSION_BUSY'
  | 'SESSION_CORRUPT'
  | 'STORE_UNAVAILABLE'
  | 'STORE_LOCKED'
  | 'CAPABILITY_MISSING'
  | 'STREAM_NOT_FOUND'
  | 'STREAM_CLOSED'
  | 'INVALID_ARGUMENT'

export interface HarnessErrorOptions {
  cause?: unknown
}

/** Marks harness errors, also across two copies of this package in one process. */
const BRAND = Symbol.for('@tanstack/ai-harness/error')

/** Base class of every typed error the harness and its stores throw. */
export class HarnessError extends Error {
  readonly code: HarnessErrorCode
  readonly [BRAND] = true

  constructor(code: HarnessErrorCode, message: string, options?: HarnessErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'HarnessError'
    this.code = code
  }
}

/**
 * True when `error` is a harness error, optionally with the given code. Driver errors
 * that merely carry a string `code` (pg's '40001', Node's 'ECONNRESET') are not.
 */
export function isHarnessError(error: unknown, code?: HarnessErrorCode): error is HarnessError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [BRAND]?: unknown })[BRAND] === true &&
    (code === undefined || (error as HarnessError).code === code)
  )
}

/**
 * The log's next free seq was not the one the writer expected: another writer
 * got there first, or the batch already landed. Nothing was written.
 */
export class LogConflictError extends HarnessError {
  override readonly code = 'LOG_CONFLICT' as const
  readonly logId: string
  readonly expectedSeq: number
  /** The log's actual next free seq, when the store knows it cheaply. */
  readonly actualNextSeq: number | undefined

  constructor(logId: string, expectedSeq: number, actualNextSeq?: number, options?: HarnessErrorOptions) {
    super(
      'LOG_CONFLICT',
      `Append to log ${JSON.stringify(logId)} at seq ${expectedSeq} conflicted` +
        (actualNextSeq === undefined ? '' : ` (next free seq is ${actualNextSeq})`) +
        '. Another writer appended first, or this batch already landed: read the log again and decide from what is there; do not retry the same append blindly.',
      options,
    )
    this.name = 'LogConflictError'
    this.logId = logId
    this.expectedSeq = expectedSeq
    this.actualNextSeq = actualNextSeq
  }
}

/** A record or batch is over the store's declared limits. Nothing was written. */
export class RecordTooLargeError extends HarnessError {
  override readonly code = 'RECORD_TOO_LARGE' as const
  readonly bytes: number
  readonly limit: number
  /** Which declared limit it is over, e.g. `maxRecordBytes`. */
  readonly limitName: string | undefined

  /**
   * @param declared which of the store's `limits` it is over; with `minimum`, the least
   *   every store must accept: a limit below it is the store's mistake, and the message says so.
   */
  constructor(what: string, bytes: number, limit: number, declared?: { name: string; unit?: string; minimum?: number }) {
    const unit = declared?.unit ?? 'bytes of JSON'
    const over = `${what} is ${bytes} ${unit}, over the store's limit of ${limit}${declared ? ` (limits.${declared.name})` : ''}. `
    const advice =
      declared?.minimum !== undefined && limit < declared.minimum
        ? `The store declares limits.${declared.name} = ${limit}, below the ${declared.minimum} every store must accept: fix the store's limits declaration, not the app.`
        : declared?.name === 'maxBatchRecords'
          ? 'Append fewer records at once.'
          : 'Store large data elsewhere and log its id instead.'
    super('RECORD_TOO_LARGE', over + advice)
    this.name = 'RecordTooLargeError'
    this.bytes = bytes
    this.limit = limit
    this.limitName = declared?.name
  }
}

/** Another owner holds a live lease on the session. */
export class LeaseHeldError extends HarnessError {
  override readonly code = 'LEASE_HELD' as const
  readonly logId: string
  readonly expiresAt: number | undefined

  constructor(logId: string, expiresAt?: number) {
    super(
      'LEASE_HELD',
      `Session ${JSON.stringify(logId)} is driven by another host` +
        (expiresAt === undefined ? '' : ` until ${new Date(expiresAt).toISOString()}`) +
        '. Let that host finish, or try again after its lease expires.',
    )
    this.name = 'LeaseHeldError'
    this.logId = logId
    this.expiresAt = expiresAt
  }
}

/** The caller's lease expired or was taken over; it must stop writing. */
export class LeaseLostError extends HarnessError {
  override readonly code = 'LEASE_LOST' as const
  readonly logId: string

  constructor(logId: string, detail = 'expired or was taken over by another host') {
    super(
      'LEASE_LOST',
      `The lease on session ${JSON.stringify(logId)} ${detail}. Stop driving this session; the current owner continues it.`,
    )
    this.name = 'LeaseLostError'
    this.logId = logId
  }
}
