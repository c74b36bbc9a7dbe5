import type { HarnessStore } from '@tanstack/ai-harness'
import type { RequestCount, RequestCounter } from '../targets/requests.js'

/** One append as the harness made it: what it held, how long the store took, what it sent. */
export interface AppendSample {
  firstType: string
  records: number
  /** The batch's records as one JSON array: the bytes a bare write of the same data sends. */
  bytes: string
  ms: number
  requests: RequestCount & { total: number }
}

/**
 * Wraps a store to see the harness's appends from outside: the batch that commits a
 * tool result (its `harness.tool.result` and the tool's `append` records) is timed
 * here, since it happens after the tool returns. Store calls are counted too.
 */
export function instrumentedStore(store: HarnessStore, requests: RequestCounter) {
  const appends: AppendSample[] = []
  const calls = { append: 0, read: 0 }
  const wrapped: HarnessStore = {
    limits: store.limits,
    async append(logId, expectedSeq, records) {
      calls.append++
      const before = requests.snapshot()
      const start = performance.now()
      const result = await store.append(logId, expectedSeq, records)
      appends.push({
        firstType: records[0]?.type ?? '',
        records: records.length,
        bytes: JSON.stringify(records),
        ms: performance.now() - start,
        requests: requests.since(before),
      })
      return result
    },
    read(logId, options) {
      calls.read++
      return store.read(logId, options)
    },
    delete: (logId) => store.delete(logId),
    ...(store.leases ? { leases: store.leases } : {}),
    ...(store.wakeups ? { wakeups: store.wakeups } : {}),
  }
  return { store: wrapped, appends, calls }
}
