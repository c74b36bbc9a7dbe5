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
    console.log(depth, variant, report.writes, report.points.map((p) => `${p.k}:${p.outcome}`).join(' '))
    expect(report.failures).toEqual([])
  })
})
