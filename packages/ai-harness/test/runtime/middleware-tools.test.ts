import { type AnyTool, type ChatMiddleware, toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, createWorld, drain, recordsOf, runUntilCrash } from '../support/harness.js'

/** A checkout tool with two steps and an app record; counts each side effect by key. */
function checkoutTool(effects: string[]) {
  return durableTool(
    toolDefinition({ name: 'checkout', description: 'Charge and invoice', inputSchema: z.object({}) }),
    async (_a, { step, append }) => {
      const charge = await step.do('charge', ({ idempotencyKey }) => {
        effects.push(idempotencyKey)
        return { id: 'ch_1' }
      })
      await step.do('invoice', ({ idempotencyKey }) => {
        effects.push(idempotencyKey)
      })
      append([{ type: 'app.receipt', charge: charge.id }])
      return { charged: charge.id }
    },
  )
}

/** A middleware that adds tools to every chat() run, as a plugin system would. */
const addTools = (tools: AnyTool[]): ChatMiddleware => ({
  name: 'adds-tools',
  onConfig: (_ctx, config) => ({ tools: [...config.tools.filter((t) => !tools.some((x) => x.name === t.name)), ...tools] }),
})

const isStep = (name: string) => (records: readonly LogRecord[]) => records.some((r) => r.type === 'harness.step' && r.name === name)

describe('a durable tool that a middleware adds', () => {
  it('runs durably: its steps are logged, its keys name the session, and its records land with its result', async () => {
    const world = createWorld()
    const effects: string[] = []
    const harness = defineHarness({
      name: 'shop',
      adapter: batchModel([{ name: 'checkout' }]),
      middleware: [addTools([checkoutTool(effects)])],
    })
    const session = await world.start(harness, 'host').host.open({ sessionId: 'mw' })
    await drain(session.send('check out'))
    const entries = await session.entries()
    const [call] = recordsOf(entries, 'harness.assistant')[0]!.toolCalls as Array<{ id: string; replay?: string }>
    expect(call?.replay).toBe('safe')
    expect(effects).toEqual([`mw:${call!.id}:charge`, `mw:${call!.id}:invoice`])
    expect(recordsOf(entries, 'harness.step').map((r) => r.name)).toEqual(['charge', 'invoice'])
    const resultAt = entries.findIndex((e) => e.record.type === 'harness.tool.result')
    expect(entries[resultAt]!.record).toMatchObject({ ok: true, result: { charged: 'ch_1' } })
    expect(entries[resultAt + 1]!.record).toEqual({ type: 'app.receipt', charge: 'ch_1' })
  })

  it('a middleware that swaps a plain tool for a durable one under the same name: the durable one runs, durably', async () => {
    const world = createWorld()
    const effects: string[] = []
    const plain = toolDefinition({ name: 'checkout', description: 'plain', inputSchema: z.object({}) }).server(async () => 'plain ran')
    const harness = defineHarness({
      name: 'shop',
      adapter: batchModel([{ name: 'checkout' }]),
      tools: [plain],
      middleware: [addTools([checkoutTool(effects)])],
    })
    const session = await world.start(harness, 'host').host.open({ sessionId: 'swap' })
    await drain(session.send('check out'))
    expect(effects).toHaveLength(2)
    expect(recordsOf(await session.entries(), 'harness.step')).toHaveLength(2)
  })

  for (const point of ['before', 'after'] as const) {
    it(`after a crash ${point} its first step was logged, it runs again as a durable tool: each side effect once per key`, async () => {
      const world = createWorld()
      const effects: string[] = []
      const harness = defineHarness({
        name: 'shop',
        adapter: batchModel([{ name: 'checkout' }]),
        middleware: [addTools([checkoutTool(effects)])],
      })
      const first = world.start(harness, 'host-1')
      first.store.crashOnAppend(isStep('charge'), point)
      await runUntilCrash(first, (await first.host.open({ sessionId: 'mw' })).send('check out'))
      world.expireLeases()
      const reopened = await world.start(harness, 'host-2').host.open({ sessionId: 'mw' })
      await drain(reopened.resume())
      const entries = await reopened.entries()
      const [result] = recordsOf(entries, 'harness.tool.result')
      expect(result).toMatchObject({ ok: true, cut: false, result: { charged: 'ch_1' } })
      expect(new Set(effects).size).toBe(2)
      expect(effects).toHaveLength(point === 'before' ? 3 : 2)
      expect(recordsOf(entries, 'harness.step').map((r) => r.name)).toEqual(['charge', 'invoice'])
      expect(recordsOf(entries, 'app.receipt')).toHaveLength(1)
      expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    })
  }
})

/** A middleware that wraps every tool's execute as `{ ...tool, execute: wrapped }`, as permission and metering middleware do. */
const wrapEvery = (
  name: string,
  wrap: (tool: AnyTool, execute: NonNullable<AnyTool['execute']>) => AnyTool['execute'],
): ChatMiddleware => ({
  name,
  onConfig: (_ctx, config) => ({
    tools: config.tools.map((tool) => (tool.execute ? ({ ...tool, execute: wrap(tool, tool.execute) } as AnyTool) : tool)),
  }),
})

/** Refuses the tools not in `allowed`, before they run. */
const permissions = (allowed: string[], checked: string[]) =>
  wrapEvery('permissions', (tool, execute) => async (args, context) => {
    checked.push(tool.name)
    if (!allowed.includes(tool.name)) throw new Error(`${tool.name} is not allowed for this user`)
    return execute(args, context)
  })

/** Counts each call and adds its cost to the result. */
const metering = (meter: Array<{ tool: string; ok: boolean }>) =>
  wrapEvery('metering', (tool, execute) => async (args, context) => {
    try {
      const result = await execute(args, context)
      meter.push({ tool: tool.name, ok: true })
      return { ...(result as object), cost: 1 }
    } catch (error) {
      meter.push({ tool: tool.name, ok: false })
      throw error
    }
  })

/** The checkout without its app record (plain chat() has no log for one): it runs in both. */
function chargeTool(effects: string[]) {
  return durableTool(
    toolDefinition({ name: 'checkout', description: 'Charge and invoice', inputSchema: z.object({}) }),
    async (_a, { step }) => {
      const charge = await step.do('charge', ({ idempotencyKey }) => {
        effects.push(idempotencyKey)
        return { id: 'ch_1' }
      })
      await step.do('invoice', ({ idempotencyKey }) => {
        effects.push(idempotencyKey)
      })
      return { charged: charge.id }
    },
  )
}

describe('a durable tool that a middleware wraps ({ ...tool, execute: wrapped })', () => {
  /** What the wrapper saw and what the model got, in plain chat() and then in a session. */
  async function both(middleware: () => ChatMiddleware[]) {
    const { chat } = await import('@tanstack/ai')
    const plainEffects: string[] = []
    const adapter = batchModel([{ name: 'checkout' }])
    for await (const _ of chat({
      adapter,
      messages: [{ role: 'user', content: 'check out' }],
      tools: [chargeTool(plainEffects)],
      middleware: middleware(),
    }));
    const plainResult = adapter.requests.at(-1)?.find((m) => m.role === 'tool')?.content

    const world = createWorld()
    const effects: string[] = []
    const harness = defineHarness({
      name: 'shop',
      adapter: batchModel([{ name: 'checkout' }]),
      tools: [chargeTool(effects)],
      middleware: middleware(),
    })
    const session = await world.start(harness, 'host').host.open({ sessionId: 'wrapped' })
    await drain(session.send('check out'))
    const entries = await session.entries()
    const results = recordsOf(entries, 'harness.tool.result')
    expect(results).toHaveLength(1)
    return {
      plainEffects,
      plainResult: JSON.parse(String(plainResult)),
      effects,
      result: results[0],
      steps: recordsOf(entries, 'harness.step'),
    }
  }

  it('a permission wrapper that refuses the call runs in a session as in plain chat(): the tool does not run', async () => {
    const plain: string[] = []
    const session: string[] = []
    let run = 0
    const { plainEffects, plainResult, effects, result, steps } = await both(() => [permissions([], run++ === 0 ? plain : session)])
    expect(session).toEqual(plain)
    expect(session.length).toBeGreaterThan(0)
    expect(plainEffects).toEqual([])
    expect(effects).toEqual([])
    expect(steps).toEqual([])
    expect(plainResult).toEqual({ error: 'checkout is not allowed for this user' })
    expect(result).toMatchObject({ ok: false, result: { error: 'checkout is not allowed for this user' } })
  })

  it('a permission wrapper that allows the call lets the durable tool run durably under it', async () => {
    const plain: string[] = []
    const session: string[] = []
    let run = 0
    const { effects, result, steps } = await both(() => [permissions(['checkout'], run++ === 0 ? plain : session)])
    expect(session).toEqual(plain)
    expect(effects).toEqual([expect.stringMatching(/^wrapped:.*:charge$/), expect.stringMatching(/^wrapped:.*:invoice$/)])
    expect(steps.map((s) => s.name)).toEqual(['charge', 'invoice'])
    expect(result).toMatchObject({ ok: true, result: { charged: 'ch_1' } })
  })

  it('a metering wrapper counts the call and changes its result in a session as in plain chat()', async () => {
    const plain: Array<{ tool: string; ok: boolean }> = []
    const session: Array<{ tool: string; ok: boolean }> = []
    let run = 0
    const { plainResult, result } = await both(() => [metering(run++ === 0 ? plain : session)])
    expect(session).toEqual(plain)
    expect(session.length).toBeGreaterThan(0)
    expect(plainResult).toMatchObject({ charged: 'ch_1', cost: 1 })
    expect(result).toMatchObject({ ok: true, result: { charged: 'ch_1', cost: 1 } })
  })
})
