import type { HarnessStore } from '@tanstack/ai-harness'
import type { RequestCounter } from './requests.js'

/** Counts calls on a store that has no client to count at (the memory store): one call, one request. */
export function countingStore(store: HarnessStore, requests: RequestCounter): HarnessStore {
  const { leases, wakeups } = store
  return {
    limits: store.limits,
    append(logId, expectedSeq, records) {
      requests.add('writes', 'append')
      return store.append(logId, expectedSeq, records)
    },
    read(logId, options) {
      requests.add('reads', 'read')
      return store.read(logId, options)
    },
    delete(logId) {
      requests.add('writes', 'delete')
      return store.delete(logId)
    },
    ...(leases
      ? {
          leases: {
            acquire(logId, owner, ttlMs) {
              requests.add('writes', 'lease.acquire')
              return leases.acquire(logId, owner, ttlMs)
            },
            renew(lease, ttlMs) {
              requests.add('writes', 'lease.renew')
              return leases.renew(lease, ttlMs)
            },
            release(lease) {
              requests.add('writes', 'lease.release')
              return leases.release(lease)
            },
          },
        }
      : {}),
    ...(wakeups ? { wakeups } : {}),
  }
}
