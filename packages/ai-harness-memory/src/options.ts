/**
 * The options of `memoryStore()`, its limits, and the check that refuses a wrong
 * option with `INVALID_ARGUMENT` naming the option and what it accepts.
 */
import { type Clock, DEFAULT_STORE_LIMITS, isObject, type OptionChecks, optionChecks, type StoreLimits } from '@tanstack/ai-harness/store'
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
const checks: OptionChecks = optionChecks('memoryStore')

/** Throws `INVALID_ARGUMENT` for the first option that is not what `memoryStore` takes. */
export function checkOptions(options: unknown): asserts options is MemoryStoreOptions {
  const given = checks.object(options, '{ clock }', true)
  checks.knownKeys(given, OPTION_NAMES)
  const data = given.data
  if (data !== undefined) {
    const maps = isObject(data) && [data.logs, data.leases, data.wakeups].every((map) => map instanceof Map)
    if (!maps || !isObject(data.fences) || typeof data.fences.last !== 'number') {
      checks.invalid('data', 'a data set made by createMemoryData(), shared between instances', data)
    }
  }
  checks.clock(given.clock)
  checks.limits(given.limits)
}
