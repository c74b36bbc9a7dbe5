import { type AnyTool, type ChatMiddleware, toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type LogRecord } from '@tanstack/ai-harness'
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
