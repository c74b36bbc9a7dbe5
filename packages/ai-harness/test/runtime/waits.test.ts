import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool, HARNESS_EVENTS } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { askHarness } from '../support/faults.js'
import { codeOf, createWorld, drain, recordsOf } from '../support/harness.js'

describe('a session whose turn waits for a person', () => {
  it('refuses a new prompt with SESSION_BUSY instead of dropping it, and writes nothing', async () => {
    const world = createWorld()
    const { host } = world.start(askHarness(), 'host')
    const chunks = await drain((await host.open({ sessionId: 'ask' })).send('go'))
    expect(chunks.some((c) => (c as { name?: string }).name === HARNESS_EVENTS.question)).toBe(true)
    const again = await host.open({ sessionId: 'ask' })
    const before = (await again.entries()).length
    expect(await codeOf(() => drain(again.send('hello?')))).toBe('SESSION_BUSY')
    expect((await again.entries()).length).toBe(before)
    expect(again.parked?.reason).toBe('ask')
  })

  it('a session object that parked let its lease go: it refuses to drive the session until opened again', async () => {
    const world = createWorld()
    const { host } = world.start(askHarness(), 'host')
    const session = await host.open({ sessionId: 'ask' })
    await drain(session.send('go'))
    expect(session.status).toBe('parked')
    const before = (await session.entries()).length
    expect(await codeOf(() => drain(session.resume()))).toBe('INVALID_ARGUMENT')
    expect((await session.entries()).length).toBe(before)
    const other = world.start(askHarness(), 'other-host').host
    const reopened = await other.open({ sessionId: 'ask' })
    expect(reopened.parked?.reason).toBe('ask')
  })

  it('takes a new prompt after the waiting turn is cancelled', async () => {
    const world = createWorld()
    const { host } = world.start(askHarness(), 'host')
    await drain((await host.open({ sessionId: 'ask' })).send('go'))
    const again = await host.open({ sessionId: 'ask' })
    await again.cancel('changed my mind')
    await drain(again.send('go'))
    const entries = await again.entries()
    expect(recordsOf(entries, 'harness.turn.cancelled')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.turn.started')).toHaveLength(2)
    expect(recordsOf(entries, 'harness.ask')).toHaveLength(2)
  })
})

describe('step.sleep on a store without wakeups', () => {
  it('waits in the process instead of parking, since no worker could wake it', async () => {
    const world = createWorld()
    const napper = defineHarness({
      name: 'napper',
      parkAfterMs: 0,
      adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'nap', args: {} }] } : 'Rested.')),
      tools: [
        durableTool(toolDefinition({ name: 'nap', description: 'Sleeps', inputSchema: z.object({}) }), async (_args, { step }) => {
          await step.sleep('nap', 20)
          return 'awake'
        }),
      ],
    })
    const { store } = world.start(napper, 'host')
    const host = createHost({ store: { ...store, wakeups: undefined }, harnesses: napper, clock: world.clock })
    const session = await host.open({ sessionId: 'nap' })
    const chunks = await drain(session.send('sleep'))
    expect(chunks.some((c) => (c as { name?: string }).name === HARNESS_EVENTS.parked)).toBe(false)
    const entries = await session.entries()
    expect(recordsOf(entries, 'harness.sleep')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  })
})
