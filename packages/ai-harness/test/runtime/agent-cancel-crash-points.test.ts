import { createManualClock, enumerateAgentCancelCrashPoints } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'

describe('crash points of a cancel that rolls back a child agent (memory store)', () => {
  for (const depth of [1, 2] as const) {
    for (const takeOver of ['host', 'worker'] as const) {
      it(`depth ${depth}, taken over by a ${takeOver}: every cut ends with every turn cancelled, nothing undone twice`, async () => {
        const report = await enumerateAgentCancelCrashPoints({
          depth,
          takeOver,
          world: async () => {
            const data = createMemoryData()
            const clock = createManualClock()
            return { clock, openStore: async () => memoryStore({ data, clock }) }
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
