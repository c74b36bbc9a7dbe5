import { createManualClock, type CrashVariant, enumerateAgentCrashPoints } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'

const memoryWorld = async () => {
  const data = createMemoryData()
  const clock = createManualClock()
  return { clock, openStore: async () => memoryStore({ data, clock }) }
}

const only = process.env.CRASH_POINTS ? process.env.CRASH_POINTS.split(',').map(Number) : undefined

describe.each([1, 2] as const)('agent tool at every crash point, %i level(s), memory', (depth) => {
  it.each(['same-time', 'staggered', 'two-workers'] as CrashVariant[])('%s', async (variant) => {
    const report = await enumerateAgentCrashPoints({ world: memoryWorld, depth, variant, points: only })
    if (process.env.CRASH_REPORT) {
      const cut = report.points.filter((p) => p.outcome === 'cut').length
      const busy = report.points.filter((p) => p.busy > 0).length
      console.log(`depth ${depth} ${variant}: ${report.writes} writes, ${cut} points cut, ${busy} points met a held lease`)
    }
    expect(report.failures).toEqual([])
  })
})
