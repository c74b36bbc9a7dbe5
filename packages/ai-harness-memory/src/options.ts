/**
 * The options of `memoryStore()`, its limits, and the check that refuses a wrong
 * option with `INVALID_ARGUMENT` naming the option and what it accepts.
 */
import { type Clock, DEFAULT_STORE_LIMITS, HarnessError, type StoreLimits } from '@tanstack/ai-harness/store'
import type { MemoryData } from './memory-data.js'

/**
 * Longest log id the memory store accepts. A `Map` keeps any string exactly; the store
 * declares the PostgreSQL store's bound, so an app meets the same limit on both.
 */
export const MEMORY_MAX_LOG_ID_BYTES = 2048

/** The core's defaults (`DEFAULT_STORE_LIMITS`), as the PostgreSQL store's, so an app moving between them meets the same limits. */
export const MEMORY_DEFAULT_LIMITS: StoreLimits = { ...DEFAULT_STORE_LIMITS, maxLogIdBytes: MEMORY_MAX_LOG_ID_BYTES }

export interface MemoryStoreOptions {
  /** Share data between instances; default: a new, private data set (`createMemoryData()`). */
  data?: MemoryData
  /** Time for leases and wakeups, and `store.now()`. Default: the system clock. */
  clock?: Clock
  /** Override the declared limits (see `MEMORY_DEFAULT_LIMITS`). */
  limits?: Partial<StoreLimits>
}

const OPTION_NAMES = ['data', 'clock', 'limits'] as const
const LIMIT_NAMES = ['maxRecordBytes', 'maxBatchBytes', 'maxBatchRecords', 'maxLogIdBytes'] as const

const refuse = (message: string): never => {
  throw new HarnessError('INVALID_ARGUMENT', `memoryStore: ${message}`)
}
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const show = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? 'an array' : String(value))

/** Throws `INVALID_ARGUMENT` for the first option that is not what `memoryStore` takes. */
export function checkOptions(options: unknown): asserts options is MemoryStoreOptions {
  if (!isObject(options)) refuse(`takes an options object such as { clock }, or nothing, not ${show(options)}.`)
  const given = options as Record<string, unknown>
  for (const name of Object.keys(given)) {
    if (!(OPTION_NAMES as readonly string[]).includes(name))
      refuse(`it takes no option "${name}"; its options are ${OPTION_NAMES.join(', ')}.`)
  }
  const data = given.data
  if (data !== undefined) {
    const maps = isObject(data) && [data.logs, data.leases, data.wakeups].every((map) => map instanceof Map)
    if (!maps || !isObject(data.fences) || typeof data.fences.last !== 'number') {
      refuse('options.data must be a data set made by createMemoryData(), shared between instances.')
    }
  }
  if (given.clock !== undefined && !(isObject(given.clock) && typeof given.clock.now === 'function')) {
    refuse(`options.clock must be an object with a now() method returning ms since the epoch, not ${show(given.clock)}.`)
  }
  const limits = given.limits
  if (limits === undefined) return
  if (!isObject(limits)) refuse(`options.limits must be an object such as { maxRecordBytes: 65536 }, not ${show(limits)}.`)
  for (const [name, value] of Object.entries(limits as object)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name))
      refuse(`options.limits.${name} is not a limit; the limits are ${LIMIT_NAMES.join(', ')}.`)
    if (value !== undefined && (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)) {
      refuse(`options.limits.${name} must be a whole number >= 1, not ${show(value)}.`)
    }
  }
}
