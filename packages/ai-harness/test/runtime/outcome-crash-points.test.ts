import { createManualClock, enumerateOutcomeCrashPoints, OUTCOME_SCENARIOS } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'

describe('crash points around verify, once and undo (memory store)', () => {
  for (const scenario of Object.keys(OUTCOME_SCENARIOS) as Array<keyof typeof OUTCOME_SCENARIOS>) {
    it(`${scenario}: every crash point before and after each append ends resolved, no effect or compensation twice`, async () => {
      const report = await enumerateOutcomeCrashPoints({
        scenario,
        world: async () => {
          const data = createMemoryData()
          const clock = createManualClock()
          return { clock, openStore: async () => memoryStore({ data, clock }) }
        },
      })
      expect(report.failures).toEqual([])
      expect(report.points.length).toBe(2 * report.writes.length)
      expect(report.points.every((p) => p.ended === 'finished')).toBe(true)
      expect(report.writes.join(' ')).toContain(scenario.startsWith('undo') ? 'harness.rollback' : 'harness.step.intent')
      // The cancel's own writes are crash points too: the compensations, the call's result, the turn's end.
      if (scenario === 'undo-cancel') expect(report.writes.slice(-2)).toEqual(['[harness.tool.result]', '[harness.turn.cancelled]'])
    })
  }
})
