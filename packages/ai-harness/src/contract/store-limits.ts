import { HarnessError } from './errors.js'
import { DEFAULT_MAX_LOG_ID_BYTES, type StoreLimits } from './types.js'

/**
 * The least every store must accept. The harness writes its own records (a turn's
 * messages, a step's value up to 64 KiB, a tool result with its app records) and uses
 * session ids such as `<parent>/agent/<toolCallId>`; a store that declares less cannot
 * run it. The conformance suite refuses a store below these before any case runs.
 */
export const MIN_STORE_LIMITS: Required<StoreLimits> = {
  maxRecordBytes: 64 * 1024,
  maxBatchBytes: 64 * 1024,
  maxBatchRecords: 100,
  maxLogIdBytes: 128,
}

const NAMES = ['maxRecordBytes', 'maxBatchBytes', 'maxBatchRecords', 'maxLogIdBytes'] as const

/**
 * What is wrong with a store's declared `limits`, one sentence each (empty when nothing
 * is). Each sentence names the declaration to fix: the store's `limits`, not the app.
 */
export function storeLimitsProblems(limits: StoreLimits | undefined): string[] {
  if (typeof limits !== 'object' || limits === null) {
    return ['The store declares no `limits`; give it { maxRecordBytes, maxBatchBytes, maxBatchRecords?, maxLogIdBytes? } in UTF-8 bytes.']
  }
  const problems: string[] = []
  for (const name of NAMES) {
    const value = limits[name]
    if (value === undefined && (name === 'maxBatchRecords' || name === 'maxLogIdBytes')) continue
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
      problems.push(`The store declares limits.${name} = ${String(value)}; declare a whole number of ${unit(name)} greater than 0.`)
    } else if (value < MIN_STORE_LIMITS[name]) {
      problems.push(
        `The store declares limits.${name} = ${value}, below the ${MIN_STORE_LIMITS[name]} ${unit(name)} every store must accept (MIN_STORE_LIMITS). Raise it in the store's limits declaration, or, if the database cannot hold that much, this store cannot run the harness.`,
      )
    }
  }
  return problems
}

/** Throws `INVALID_ARGUMENT` naming the store's declaration when its `limits` are below what the harness needs. */
export function assertStoreLimits(limits: StoreLimits | undefined): void {
  const problems = storeLimitsProblems(limits)
  if (problems.length > 0) throw new HarnessError('INVALID_ARGUMENT', problems.join(' '))
}

/** The declared longest log id, or the default. */
export function maxLogIdBytesOf(limits: Pick<StoreLimits, 'maxLogIdBytes'> | undefined): number {
  return limits?.maxLogIdBytes ?? DEFAULT_MAX_LOG_ID_BYTES
}

function unit(name: (typeof NAMES)[number]): string {
  return name === 'maxBatchRecords' ? 'records' : 'bytes'
}
