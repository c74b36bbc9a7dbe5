import type { HarnessStore } from '@tanstack/ai-harness'
import { createManualClock, enumerateAgentCancelCrashPoints, type ManualClock, unfencedAppends } from '@tanstack/ai-harness/testing'
import { createMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'

/** The memory store, and the same with appends that ignore the lease, as DynamoDB's and S3's do (no fence). */
const stores = {
  memory: (data: MemoryData, clock: ManualClock): HarnessStore => memoryStore({ data, clock }),
  'memory without fenced appends': (data: MemoryData, clock: ManualClock): HarnessStore => unfencedAppends(memoryStore({ data, clock })),
}

describe.each(Object.entries(stores))('crash points of a cancel that rolls back a child agent (%s)', (_name, open) => {
  for (const depth of [1, 2] as const) {
    for (const takeOver of ['host', 'worker'] as const) {
      it(`depth ${depth}, taken over by a ${takeOver}: every cut ends with every turn cancelled, nothing undone twice`, async () => {
        const report = await enumerateAgentCancelCrashPoints({
          depth,
          takeOver,
          world: async () => {
            const data = createMemoryData()
            const clock = createManualClock()
            return { clock, openStore: async () => open(data, clock) }
          },
        })
        expect(report.failures).toEqual([])
        // The parent logs the cancel before anything is undone; then each child, and the shop rolls back.
        expect(report.writes[0]).toBe('parent [harness.rollback]')
        expect(report.writes.some((w) => w.startsWith(depth === 1 ? 'child [harness.rollback]' : 'grandchild [harness.rollback]'))).toBe(
          true,
        )
        expect(report.points.length).toBe(2 * report.writes.length)
      })
    }
  }
})
