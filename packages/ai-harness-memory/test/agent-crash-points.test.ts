import { createManualClock, type CrashVariant, enumerateAgentCrashPoints } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'

// The agent-tool crash-point enumeration (issue 20) on the memory store: each crash
// point on data of its own. CRASH_POINTS=3,14 runs only those points; CRASH_REPORT=1
// prints what was counted.
const memoryWorld = async () => {
  const data = createMemoryData()
  const clock = createManualClock()
  return { clock, openStore: async () => memoryStore({ data, clock }) }
}

const only = process.env.CRASH_POINTS ? process.env.CRASH_POINTS.split(',').map(Number) : undefined

describe.each([1, 2] as const)('an agent tool at every crash point, %i level(s) deep, on memory', (depth) => {
  it.each(['same-time', 'staggered', 'two-workers'] as CrashVariant[])('%s', async (variant) => {
    const report = await enumerateAgentCrashPoints({ world: memoryWorld, depth, variant, points: only })
    if (process.env.CRASH_REPORT) {
      const cut = report.points.filter((p) => p.outcome === 'cut').length
      const busy = report.points.filter((p) => p.busy > 0).length
      console.log(`depth ${depth} ${variant}: ${report.writes} writes, ${cut} points cut, ${busy} points met a held lease`)
    }
    expect(report.failures).toEqual([])
    if (!only) expect(report.points.length).toBe(report.writes)
  })
})
