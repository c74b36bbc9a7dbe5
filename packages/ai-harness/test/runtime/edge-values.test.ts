import { chat, toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, type DurableToolContext, durableTool } from '@tanstack/ai-harness'
import { MAX_TIME_MS } from '@tanstack/ai-harness/store'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { batchModel, createWorld, drain, TEST_LEASE_MS, recordsOf } from '../support/harness.js'

/** Runs `body` inside one durable tool call and returns the code each attempt threw ('none' when it passed). */
async function insideACall(body: (context: DurableToolContext, codes: string[], ran: string[]) => Promise<void>) {
  const world = createWorld()
  const codes: string[] = []
  const ran: string[] = []
  const tool = durableTool(toolDefinition({ name: 'edge', description: 'e', inputSchema: z.object({}) }), async (_a, context) => {
    await body(context, codes, ran)
    return 'ok'
  })
  const session = await world
    .start(defineHarness({ name: 'h', adapter: batchModel([{ name: 'edge' }]), tools: [tool] }), 'host')
    .host.open({
      sessionId: 's',
    })
  await drain(session.send('go'))
  return { codes, ran, entries: await world.read('s') }
}

const attempt = async (codes: string[], run: () => Promise<unknown>) => {
  try {
    await run()
    codes.push('none')
  } catch (error) {
    codes.push(String((error as { code?: unknown }).code))
  }
}

const megabyte = 'n'.repeat(1024 * 1024)

describe('names and times at the edge of what a store holds are refused before anything runs or is written', () => {
  it('a sleep that would wake after MAX_TIME_MS is INVALID_ARGUMENT, and writes nothing', async () => {
    const { codes, entries } = await insideACall(async ({ step }, codes) => {
      await attempt(codes, () => step.sleep('forever', MAX_TIME_MS))
      await attempt(codes, () => step.sleep('longer', Number.MAX_VALUE))
      // A refused sleep does not use up its name.
      await attempt(codes, () => step.sleep('forever', 0))
    })
    expect(codes).toEqual(['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'none'])
    expect(recordsOf(entries, 'harness.sleep').map((r) => r.name)).toEqual(['forever'])
  })

  it('step names that are too long, hold NUL or a lone surrogate, or are not strings: refused before fn runs', async () => {
    const { codes, ran, entries } = await insideACall(async ({ step }, codes, ran) => {
      for (const name of [megabyte, 'x'.repeat(1025), 'a\u0000b', 'half \ud800 pair', 42, '']) {
        await attempt(codes, () => step.do(name as string, () => ran.push(String(name).slice(0, 10))))
      }
      await attempt(codes, () => step.do('é'.repeat(512), () => ran.push('longest')))
    })
    expect(codes).toEqual([...Array(6).fill('INVALID_ARGUMENT'), 'none'])
    expect(ran).toEqual(['longest'])
    expect(recordsOf(entries, 'harness.step')).toHaveLength(1)
  })

  it("a step name that would not fit the store's record limit is refused before fn runs", async () => {
    let ran = 0
    let code = ''
    const tool = durableTool(toolDefinition({ name: 'edge', description: 'e', inputSchema: z.object({}) }), async (_a, { step }) => {
      try {
        await step.do('n'.repeat(1000), () => ran++)
      } catch (error) {
        code = (error as { code: string }).code
      }
      return 'ok'
    })
    const store = memoryStore({ limits: { maxRecordBytes: 600 } })
    const session = await createHost({
      store,
      harnesses: defineHarness({ name: 'h', adapter: batchModel([{ name: 'edge' }]), tools: [tool] }),
    }).open({
      sessionId: 's',
    })
    await drain(session.send('go'))
    expect(code).toBe('INVALID_ARGUMENT')
    expect(ran).toBe(0)
    expect(recordsOf(await session.entries(), 'harness.step')).toEqual([])
  })

  it('sleep and ask names, ask messages and schemas too large or malformed: INVALID_ARGUMENT, nothing written', async () => {
    const { codes, entries } = await insideACall(async ({ step }, codes) => {
      await attempt(codes, () => step.sleep(megabyte, 10))
      const schema = z.object({ ok: z.boolean() })
      await attempt(codes, () => step.ask({ name: megabyte, message: 'OK?', schema }))
      await attempt(codes, () => step.ask({ name: 'big-message', message: megabyte, schema }))
      await attempt(codes, () => step.ask({ name: 'broken-message', message: 'half \udc00', schema }))
      await attempt(codes, () => step.ask({ name: 'big-schema', message: 'OK?', schema: z.object({ ok: z.boolean().describe(megabyte) }) }))
      await attempt(codes, () => step.ask({ name: 'no-message', message: 42 as never, schema }))
      await attempt(codes, () => step.ask(undefined as never))
    })
    expect(codes).toEqual(Array(7).fill('INVALID_ARGUMENT'))
    for (const type of ['harness.sleep', 'harness.ask', 'harness.parked']) expect(recordsOf(entries, type)).toEqual([])
  })

  it("a sleep's wake time comes from the store's clock when the store has one", async () => {
    const world = createWorld()
    const inner = memoryStore({ data: world.data, clock: world.clock })
    const skew = 3_600_000
    // The store's clock is an hour ahead of this host's.
    const store = { ...inner, now: async () => world.clock.now() + skew }
    const tool = durableTool(toolDefinition({ name: 'nap', description: 'n', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.sleep('nap', 60_000)
      return 'awake'
    })
    const harness = defineHarness({ name: 'h', adapter: batchModel([{ name: 'nap' }]), tools: [tool], parkAfterMs: 0 })
    const session = await createHost({ store, harnesses: harness, clock: world.clock, leaseMs: TEST_LEASE_MS }).open({ sessionId: 's' })
    const start = world.clock.now()
    await drain(session.send('nap'))
    expect(recordsOf(await world.read('s'), 'harness.sleep').map((r) => r.wakeAt)).toEqual([start + skew + 60_000])
    expect(session.parked).toMatchObject({ reason: 'sleep', until: start + skew + 60_000 })
  })
})

describe('a sleep longer than a timer can hold (2^31 ms, about 25 days) waits, and is stopped by the abort signal', () => {
  const LONG = 30 * 24 * 3_600_000
  const napper = (events: string[]) =>
    durableTool(toolDefinition({ name: 'nap', description: 'n', inputSchema: z.object({}) }), async (_a, { step }) => {
      events.push('sleeping')
      try {
        await step.sleep('month', LONG)
      } catch (error) {
        const { code, name } = error as { code?: unknown; name?: string }
        events.push(`stopped:${typeof code === 'string' ? code : name}`)
        throw error
      }
      events.push('awake')
      return 'awake'
    })

  it('in a session on a store without wakeups: the sleep waits in the process until the session is cancelled', async () => {
    const world = createWorld()
    const events: string[] = []
    const harness = defineHarness({ name: 'h', adapter: batchModel([{ name: 'nap' }]), tools: [napper(events)] })
    const { store } = world.start(harness, 'host')
    const host = createHost({ store: { ...store, wakeups: undefined }, harnesses: harness, clock: world.clock })
    const session = await host.open({ sessionId: 's' })
    const running = drain(session.send('nap')).catch(() => [])
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(events).toEqual(['sleeping'])
    await session.cancel('no more napping')
    await running
    // The stop does not pass through the tool: its sleep stays pending, so its catch never runs.
    expect(events).toEqual(['sleeping'])
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.turn.finished')).toEqual([])
    expect(recordsOf(entries, 'harness.turn.cancelled')).toHaveLength(1)
  })

  it('in plain chat(): the sleep waits until chat() is aborted', async () => {
    const events: string[] = []
    const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'nap', args: {} }] } : 'ok'))
    const abortController = new AbortController()
    const running = drain(chat({ adapter, messages: [{ role: 'user', content: 'nap' }], tools: [napper(events)], abortController })).catch(
      () => [],
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(events).toEqual(['sleeping'])
    abortController.abort()
    await running
    expect(events).toEqual(['sleeping', 'stopped:AbortError'])
  })
})
