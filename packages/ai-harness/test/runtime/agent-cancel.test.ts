import { toolDefinition } from '@tanstack/ai'
import { agentTool, createWorker, defineHarness, durableTool, type HarnessStore } from '@tanstack/ai-harness'
import { childSessionId } from '@tanstack/ai-harness/log'
import { scriptedText, startMachine } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { faultWorld, gate, within } from '../support/faults.js'
import { codeOf, createWorld, delegatingHarnesses, drain, recordsOf, TEST_LEASE_MS as LEASE_MS } from '../support/harness.js'

/** A parent whose agent tool runs a child that asks a person, then does a step. */
function agents(runs: string[]) {
  const confirm = durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) => {
    const answer = await step.ask({ name: 'ok', message: 'Go ahead?', schema: z.object({ ok: z.boolean() }) })
    await step.do('ship', () => {
      runs.push('ship')
    })
    return answer.ok ? 'confirmed' : 'declined'
  })
  return delegatingHarnesses(confirm)
}

describe('cancelling a turn that waits on an agent call', () => {
  it("ends the child's turn too: its question takes no answer and no worker runs it", async () => {
    const world = createWorld()
    const runs: string[] = []
    const { parent, child } = agents(runs)
    const { host } = world.start([parent, child], 'host')
    const session = await host.open({ sessionId: 'boss', harness: 'boss' })
    await drain(session.send('delegate'))
    expect(session.parked?.reason).toBe('agent')
    const [assistant] = recordsOf(await world.read('boss'), 'harness.assistant')
    const callId = String((assistant?.toolCalls as Array<{ id: string }>)[0]?.id)
    const childId = childSessionId('boss', callId)

    await session.cancel('not needed any more')
    expect(recordsOf(await world.read(childId), 'harness.turn.cancelled')).toHaveLength(1)
    const ask = recordsOf(await world.read(childId), 'harness.ask')[0]!
    expect(await codeOf(() => host.answer({ sessionId: childId, questionId: `${String(ask.toolCallId)}:ok`, answer: { ok: true } }))).toBe(
      'QUESTION_NOT_FOUND',
    )
    world.clock.advance(10 * LEASE_MS)
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: [parent, child],
      clock: world.clock,
    })
    await worker.poll()
    await worker.stop()
    expect(runs).toEqual([])
    expect(recordsOf(await world.read(childId), 'harness.answer')).toHaveLength(0)
  })
})

describe('cancelling a turn while its agent call runs the child', () => {
  it('stops the child, ends its turn as cancelled, and its step that returns later writes nothing', async () => {
    const world = faultWorld()
    const started = gate()
    const release = gate<string>()
    const work = durableTool(toolDefinition({ name: 'work', description: 'w', inputSchema: z.object({}) }), async (_a, { step }) =>
      step.do('slow', () => {
        started.open()
        return release.promise
      }),
    )
    const child = defineHarness({
      name: 'helper',
      adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'work', args: {} }] } : 'Helped.')),
      tools: [work],
    })
    const delegate = agentTool(toolDefinition({ name: 'delegate', description: 'd', inputSchema: z.object({}) }), {
      harness: child,
      prompt: () => 'Please work.',
    })
    const parent = defineHarness({
      name: 'boss',
      adapter: scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'delegate', args: {} }] } : 'Moving on.',
      ),
      tools: [delegate],
    })
    const { host } = world.machine([parent, child], 'host', { stopTimeoutMs: 100 })
    const session = await host.open({ sessionId: 'boss', harness: 'boss' })
    const stream = drain(session.send('delegate')).catch(() => [])
    await started.promise
    await within(5_000, session.cancel('not needed any more'), 'cancel')
    await within(5_000, stream, 'the stream of the cancelled turn')
    const [assistant] = recordsOf(await world.read('boss'), 'harness.assistant')
    const childId = childSessionId('boss', String((assistant?.toolCalls as Array<{ id: string }>)[0]?.id))
    expect(recordsOf(await world.read('boss'), 'harness.turn.cancelled')).toHaveLength(1)
    expect(recordsOf(await world.read(childId), 'harness.turn.cancelled')).toHaveLength(1)
    const before = (await world.read(childId)).length
    release.open('late')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await world.read(childId)).toHaveLength(before)
    expect(recordsOf(await world.read(childId), 'harness.step')).toHaveLength(0)
  })
})

describe('a child whose parent turn was cancelled while the call was still opening it', () => {
  it('is ended by the worker that resumes it, not deferred to a parent that waits for nothing', async () => {
    const world = createWorld()
    const opening = gate()
    const proceed = gate()
    const started = gate()
    const confirm = durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) =>
      step.do('slow', () => {
        started.open()
        return new Promise<string>(() => {})
      }),
    )
    const { parent, child } = delegatingHarnesses(confirm)
    const store = memoryStore({ data: world.data, clock: world.clock })
    // The child's first record waits until the cancel below has looked for children (and found none).
    const gated: HarnessStore = {
      ...store,
      append: async (logId, seq, records, options) => {
        if (logId.includes('/agent/') && records[0]?.type === 'harness.session.opened') {
          opening.open()
          await proceed.promise
        }
        return store.append(logId, seq, records, options)
      },
    }
    const machine = startMachine(gated, { harnesses: [parent, child], clock: world.clock, hostId: 'web' })
    const session = await machine.host.open({ sessionId: 'boss', harness: 'boss' })
    void drain(session.send('delegate')).catch(() => [])
    await within(5_000, opening.promise, 'the child opening')
    // A second object on the same host (a cancel button) cancels the turn while its call opens the child.
    const other = await machine.host.open({ sessionId: 'boss', harness: 'boss' })
    await other.cancel('not needed any more')
    await other.close()
    proceed.open()
    await within(5_000, started.promise, "the child's step")
    const [assistant] = recordsOf(await world.read('boss'), 'harness.assistant')
    const childId = childSessionId('boss', String((assistant?.toolCalls as Array<{ id: string }>)[0]?.id))
    expect(recordsOf(await world.read(childId), 'harness.turn.started')).toHaveLength(1)
    // The process dies with the child's step in flight; its lease runs out.
    machine.store.crash()
    world.expireLeases()

    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: [parent, child],
      clock: world.clock,
    })
    for (let i = 0; i < 3; i++) await worker.poll()
    await worker.stop()
    const ends = (await world.read(childId)).map((e) => e.record).filter((r) => r.type.startsWith('harness.turn.'))
    expect(ends.map((r) => r.type)).toEqual(['harness.turn.started', 'harness.turn.cancelled'])
    expect(ends[1]?.reason).toBe('The agent call that ran this session ended without waiting for it.')
    expect(recordsOf(await world.read(childId), 'harness.step')).toHaveLength(0)
    expect(world.data.wakeups.has(childId)).toBe(false)
  })
})
