import { memoryStore } from '@tanstack/ai-harness-memory'
import { MIN_STORE_LIMITS } from '@tanstack/ai-harness/store'
import type { Breaker } from './broken-stores.js'

/**
 * Stores that differ from the memory store in ways the contract allows. The suite must
 * pass each of them: a case that failed one would hold stores to a rule the contract
 * does not make.
 */
export const allowedVariations: Record<string, Breaker> = {
  'pages of at most 100 entries, unlimited reads too': (store) => ({
    ...store,
    read: (logId, options = {}) => store.read(logId, { ...options, limit: Math.min(options.limit ?? 100, 100) }),
  }),
  'pages of 1 to 7 entries, at random': (store) => {
    // A seeded generator, so a failure repeats.
    let seed = 12345
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return 1 + (seed % 7)
    }
    return {
      ...store,
      read: (logId, options = {}) => store.read(logId, { ...options, limit: Math.min(options.limit ?? Number.POSITIVE_INFINITY, next()) }),
    }
  },
  'the least limits every store must accept (MIN_STORE_LIMITS)': (_store, { data, clock }) =>
    memoryStore({ data, clock, limits: { ...MIN_STORE_LIMITS } }),
  'wakeup times rounded up to the whole ms, as PostgreSQL keeps them': (store) => ({
    ...store,
    wakeups: { ...store.wakeups, schedule: (logId, at) => store.wakeups.schedule(logId, Math.ceil(at)) },
  }),
}
