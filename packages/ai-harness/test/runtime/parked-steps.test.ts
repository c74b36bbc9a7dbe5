import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, HARNESS_EVENTS, type Step } from '@tanstack/ai-harness'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, createWorld, drain, recordsOf } from '../support/harness.js'

const HOUR = 3_600_000

/** What a tool that catches everything saw: its catch, its finally, what ran after the step. */
interface Seen {
  caught: unknown[]
  finallies: number
  after: string[]
}

/**
 * A tool that catches everything around one step that parks (a long sleep, a question, a
 * retry's long wait), throws an error of its own from its catch, and returns after it.
 */
function catchAll(seen: Seen, park: (step: Step) => Promise<unknown>) {
  return durableTool(
    toolDefinition({ name: 'greedy', description: 'Catches everything', inputSchema: z.object({}) }),
    async (_a, { step }) => {
      try {
        await park(step)
        seen.after.push('passed the step')
        return 'done'
      } catch (error) {
        seen.caught.push(error)
        throw new Error('the tool swallowed the park and failed on its own')
      } finally {
        seen.finallies++
      }
    },
  )
}

/** A world, what its tool saw, and the harness of the tool that parks at `park`. */
function greedyWorld(park: Parameters<typeof catchAll>[1]) {
  const seen: Seen = { caught: [], finallies: 0, after: [] }
  const harness = defineHarness({
    name: 'greedy',
    parkAfterMs: 1_000,
    adapter: batchModel([{ name: 'greedy' }]),
    tools: [catchAll(seen, park)],
  })
  return { world: createWorld(), seen, harness }
}

const PARKING_STEPS = [
  { reason: 'sleep', park: (step: Step) => step.sleep('nap', HOUR) },
  {
    reason: 'ask',
    park: (step: Step) => step.ask({ name: 'ok?', message: 'Go on?', schema: z.object({ ok: z.boolean() }) }),
  },
  {
    reason: 'sleep',
    name: 'a retry wait',
    park: (step: Step) =>
      step.do('flaky', { attempts: 2, delayMs: HOUR }, () => {
        throw new Error('flaky')
      }),
  },
] as const

describe('a step that parks does not settle: the harness ends the call, not the tool', () => {
  it.each(PARKING_STEPS)('a tool that catches everything around its $reason still parks, and nothing it throws leaks', async ({
    reason,
    park,
  }) => {
    const { world, seen, harness } = greedyWorld(park)
    const session = await world.start(harness, 'host').host.open({ sessionId: 'g' })
    const chunks = await drain(session.send('go'))
    expect(session.status).toBe('parked')
    expect(session.parked?.reason).toBe(reason)
    // The park never reached the tool: its catch and the code after the step did not run, and
    // its finally waits with the step (the trade-off: it runs in no run that parked).
    expect(seen).toEqual({ caught: [], finallies: 0, after: [] })
    const entries = await world.read('g')
    expect(recordsOf(entries, 'harness.tool.result')).toEqual([])
    expect(recordsOf(entries, 'harness.parked')).toHaveLength(1)
    const text = JSON.stringify(chunks)
    expect(text).not.toContain('swallowed')
    expect(chunks.some((c) => (c as { name?: string }).name === HARNESS_EVENTS.parked)).toBe(true)
  })

  it('the call runs again from its start when the session resumes, and its finally runs on that run', async () => {
    const { world, seen, harness } = greedyWorld((step) => step.sleep('nap', HOUR))
    await drain((await world.start(harness, 'host').host.open({ sessionId: 'g' })).send('go'))
    world.clock.advance(HOUR + 1)
    const again = await world.start(harness, 'host-2').host.open({ sessionId: 'g' })
    await drain(again.resume())
    expect(seen).toEqual({ caught: [], finallies: 1, after: ['passed the step'] })
    const [result] = recordsOf(await world.read('g'), 'harness.tool.result')
    expect(result).toMatchObject({ ok: true, result: 'done' })
  })
})
