import { toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool } from '@tanstack/ai-harness'
import type { LogEntry } from '@tanstack/ai-harness/store'
import { harnessStreams } from '@tanstack/ai-harness/streams'
import { faultyStore, oneStreamProblems, scriptedText, streamAcrossCrash } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { askHarness, gate } from '../support/faults.js'
import { codeOf, createWorld, recordsOf, TEST_LEASE_MS } from '../support/harness.js'

/** A model that answers each prompt with its text, so the order of turns shows in the log. */
const echo = () => defineHarness({ name: 'echo', adapter: scriptedText(({ messages }) => `echo ${String(messages.at(-1)?.content)}`) })

const prompts = (entries: readonly LogEntry[]) =>
  recordsOf(entries, 'harness.turn.started').map((r) => (r.messages as Array<{ content: string }>)[0]?.content)

describe('host.submit: prompts from any host', () => {
  it('takes a prompt while another host holds the lease; the holder runs it after it lets the session go', async () => {
    const world = createWorld()
    const a = world.start(echo(), 'a').host
    const b = world.start(echo(), 'b').host
    const held = await a.open({ sessionId: 's' })
    const result = await b.submit({ sessionId: 's', inputId: 'in-1', prompt: 'hi' })
    expect(result).toEqual({ runId: 's/input/in-1', duplicate: false })
    expect(world.data.wakeups.get('s')).toBeDefined()
    await held.close()
    // The close found the prompt queued: the session stays due, so a worker runs it.
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: echo(),
      clock: world.clock,
      leaseMs: TEST_LEASE_MS,
    })
    expect((await worker.poll()).resumed).toEqual(['s'])
    const entries = await world.read('s')
    expect(prompts(entries)).toEqual(['hi'])
    expect(recordsOf(entries, 'harness.turn.started')[0]?.input).toEqual({ inputId: 'in-1', inboxSeq: 1 })
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  })

  it('a double submit is one turn', async () => {
    const world = createWorld()
    const host = world.start(echo(), 'a').host
    const first = await host.submit({ sessionId: 's', inputId: 'x', prompt: 'once' })
    const second = await host.submit({ sessionId: 's', inputId: 'x', prompt: 'once' })
    expect(second).toEqual({ ...first, duplicate: true })
    await host.drive('s')
    const third = await host.submit({ sessionId: 's', inputId: 'x', prompt: 'once' })
    expect(third.duplicate).toBe(true)
    await host.drive('s')
    expect(prompts(await world.read('s'))).toEqual(['once'])
  })

  it('queues prompts that arrive during a turn and runs them in order', async () => {
    const world = createWorld()
    const step = gate()
    const slow = defineHarness({
      name: 'slow',
      adapter: scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' && messages.at(-1)?.content === 'first' ? { toolCalls: [{ name: 'wait', args: {} }] } : 'ok',
      ),
      tools: [
        durableTool(toolDefinition({ name: 'wait', description: 'Waits', inputSchema: z.object({}) }), async (_args, { step: s }) =>
          s.do('wait', async () => {
            await step.promise
            return 'done'
          }),
        ),
      ],
    })
    const a = world.start(slow, 'a').host
    const b = world.start(slow, 'b').host
    await a.submit({ sessionId: 's', inputId: '1', prompt: 'first' })
    const driving = a.drive('s')
    while (recordsOf(await world.read('s'), 'harness.assistant').length === 0) await new Promise((r) => setTimeout(r, 1))
    await b.submit({ sessionId: 's', inputId: '2', prompt: 'second' })
    await b.submit({ sessionId: 's', inputId: '3', prompt: 'third' })
    // Neither b nor a second drive on a can take it: a drives it, and takes the queue after its turn.
    expect(await b.drive('s')).toBe('busy')
    expect(await a.drive('s')).toBe('busy')
    step.open()
    await driving
    const entries = await world.read('s')
    expect(prompts(entries)).toEqual(['first', 'second', 'third'])
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(3)
  })

  it('refuses what the session cannot take, with a typed error and nothing written', async () => {
    const world = createWorld()
    const host = world.start(askHarness(), 'a').host
    await host.submit({ sessionId: 's', inputId: 'q', prompt: 'go' })
    await host.drive('s')
    const before = (await world.read('harness.inbox/s')).length
    expect(await codeOf(() => host.submit({ sessionId: 's', inputId: 'next', prompt: 'more' }))).toBe('SESSION_BUSY')
    expect(await codeOf(() => host.submit({ sessionId: 's', inputId: 'q', prompt: 'another prompt' }))).toBe('INVALID_ARGUMENT')
    expect(await codeOf(() => host.submit({ sessionId: 's', inputId: 'bad id\n', prompt: 'x' }))).toBe('INVALID_ARGUMENT')
    expect((await world.read('harness.inbox/s')).length).toBe(before)
  })
})

describe('turns that outlive the request', () => {
  it('runs to its end with nobody reading; a reader attaches later and gets the whole turn', async () => {
    const world = createWorld()
    const host = world.start(echo(), 'a').host
    const { runId } = await host.submit({ sessionId: 's', inputId: 'i', prompt: 'hello' })
    const streams = harnessStreams({ store: memoryStore({ data: world.data, clock: world.clock }), clock: world.clock })
    // A reader attaches, takes the first chunk and goes away (a closed tab).
    const reader = new AbortController()
    for await (const _ of streams.durability({ runId }).read('-1', reader.signal)) break
    await host.drive('s')
    const seen = []
    for await (const entry of streams.durability({ runId }).read('-1')) seen.push(entry.chunk.type)
    expect(seen[0]).toBe('CUSTOM')
    expect(seen).toContain('TEXT_MESSAGE_CONTENT')
    expect(seen.at(-1)).toBe('RUN_FINISHED')
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
  })
})

describe('a turn and the shutdown of its host', () => {
  it('a shutdown hands the turn off; a worker finishes it in the same stream', async () => {
    const world = createWorld()
    let calls = 0
    const step = gate()
    const slow = defineHarness({
      name: 'slow',
      adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'wait', args: {} }] } : 'ok')),
      tools: [
        durableTool(toolDefinition({ name: 'wait', description: 'Waits', inputSchema: z.object({}) }), async (_args, { step: s }) =>
          s.do('wait', async () => {
            calls++
            if (calls === 1) await step.promise
            return 'done'
          }),
        ),
      ],
    })
    const store = () => memoryStore({ data: world.data, clock: world.clock })
    const host = createHost({ store: store(), harnesses: slow, clock: world.clock, leaseMs: TEST_LEASE_MS, stopTimeoutMs: 20 })
    const { runId } = await host.submit({ sessionId: 's', inputId: 'i', prompt: 'go' })
    const driving = host.drive('s').catch(() => 'stopped')
    while (calls === 0) await new Promise((r) => setTimeout(r, 1))
    await host.shutdown()
    await driving
    const worker = createWorker({ store: store(), harnesses: slow, clock: world.clock, leaseMs: TEST_LEASE_MS })
    expect((await worker.poll()).resumed).toEqual(['s'])
    step.open()
    const streams = harnessStreams({ store: store(), clock: world.clock })
    const types: string[] = []
    for await (const entry of streams.durability({ runId }).read('-1')) types.push(entry.chunk.type)
    expect(types.at(-1)).toBe('RUN_FINISHED')
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
  })
})

describe('one stream across a crash', () => {
  it('a worker goes on in the dead host’s stream; the reconnected client sees every chunk once, in order', async () => {
    const world = createWorld()
    const report = await streamAcrossCrash({
      openStore: async () => memoryStore({ data: world.data, clock: world.clock }),
      clock: world.clock,
    })
    expect(oneStreamProblems(report)).toEqual([])
  })
})

describe('a worker that fails to drive a submitted prompt', () => {
  it('leaves the session its wakeup, even when its store cannot write one now: a later worker runs the prompt', async () => {
    const world = createWorld()
    const host = world.start(echo(), 'a').host
    await host.submit({ sessionId: 's', inputId: 'in-1', prompt: 'hi' })
    // This worker's renewals fail (so the drive fails before the turn starts), and so does every wakeup it schedules.
    const faulty = faultyStore(memoryStore({ data: world.data, clock: world.clock }))
    faulty.inject({ match: 'leases.renew', fault: { kind: 'fail' }, times: Number.POSITIVE_INFINITY })
    faulty.inject({ match: 'wakeups.schedule', fault: { kind: 'fail' }, times: Number.POSITIVE_INFINITY })
    const failing = createWorker({ store: faulty, harnesses: echo(), clock: world.clock, leaseMs: TEST_LEASE_MS })
    const first = await failing.poll()
    await failing.stop()
    expect(first.failed).toEqual(['s'])
    expect(recordsOf(await world.read('s'), 'harness.turn.started')).toHaveLength(0)
    expect(world.data.wakeups.has('s')).toBe(true)

    // The failed worker's claim holds the wakeup a while; then it is due again.
    world.clock.advance(10 * TEST_LEASE_MS)
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: echo(),
      clock: world.clock,
      leaseMs: TEST_LEASE_MS,
    })
    expect((await worker.poll()).resumed).toEqual(['s'])
    await worker.stop()
    expect(prompts(await world.read('s'))).toEqual(['hi'])
  })
})
