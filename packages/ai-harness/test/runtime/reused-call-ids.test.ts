import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import type { LogEntry, LogRecord } from '@tanstack/ai-harness/store'
import { type ScriptedReply, scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createWorld, drain, recordsOf, runUntilCrash } from '../support/harness.js'

/** A billing service that refuses a repeated idempotency key, as real payment APIs do. */
function fakeBilling() {
  const charges = new Map<string, string>()
  const invoices: string[] = []
  let attempts = 0
  return {
    charges,
    invoices,
    get attempts() {
      return attempts
    },
    charge(orderId: string, key: string) {
      attempts++
      if (!charges.has(key)) charges.set(key, orderId)
      return { id: `ch_${charges.get(key)}` }
    },
    invoice(chargeId: string, key: string) {
      attempts++
      if (!invoices.includes(key)) invoices.push(key)
      return { sent: chargeId }
    },
  }
}

function checkoutTool(billing: ReturnType<typeof fakeBilling>) {
  return durableTool(
    toolDefinition({ name: 'checkout', description: 'Charge an order', inputSchema: z.object({ orderId: z.string() }) }),
    async ({ orderId }, { step, append }) => {
      // The same step names for every order: only the call's identity tells two calls apart.
      const payment = await step.do('charge', ({ idempotencyKey }) => billing.charge(orderId, idempotencyKey))
      await step.do('invoice', ({ idempotencyKey }) => billing.invoice(payment.id, idempotencyKey))
      append([{ type: 'app.receipt', orderId }])
      return { charged: payment.id }
    },
  )
}

/** A model that answers each prompt from a list of replies, like a local model that numbers its call ids per response. */
const replies = (list: ScriptedReply[]) => scriptedText(list)

const callsOf = (entries: readonly LogEntry[]) =>
  recordsOf(entries, 'harness.assistant').flatMap(
    (r) => r.toolCalls as Array<{ id: string; name: string; arguments: string; modelId?: string }>,
  )

/** Every assistant tool call the model was shown has exactly one tool message with its id, and the other way round. */
function expectConsistentHistory(messages: ReadonlyArray<{ role: string; toolCalls?: Array<{ id: string }>; toolCallId?: string }>) {
  const calls = messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []))
  const results = messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId)
  expect(new Set(calls).size).toBe(calls.length)
  expect([...results].sort()).toEqual([...calls].sort())
}

const isStepOf = (name: string, orderValue: string) => (records: readonly LogRecord[]) =>
  records.some((r) => r.type === 'harness.step' && r.name === name && JSON.stringify(r.value ?? null).includes(orderValue))

describe('a model that reuses a tool-call id', () => {
  it('a call that reuses an id of an earlier turn runs, is logged under its own id, and gets its own idempotency keys', async () => {
    const world = createWorld()
    const billing = fakeBilling()
    const adapter = replies([
      { toolCalls: [{ id: 'call_0', name: 'checkout', args: { orderId: 'o1' } }] },
      'Order o1 is placed.',
      { toolCalls: [{ id: 'call_0', name: 'checkout', args: { orderId: 'o2' } }] },
      'Order o2 is placed.',
    ])
    const harness = defineHarness({ name: 'shop', adapter, tools: [checkoutTool(billing)] })
    const session = await world.start(harness, 'host').host.open({ sessionId: 'reuse' })
    await drain(session.send('buy o1'))
    await drain(session.send('buy o2'))

    expect([...billing.charges.entries()]).toEqual([
      ['reuse:call_0:charge', 'o1'],
      ['reuse:call_0-2:charge', 'o2'],
    ])
    expect(billing.invoices).toEqual(['reuse:call_0:invoice', 'reuse:call_0-2:invoice'])
    const entries = await session.entries()
    expect(callsOf(entries)).toEqual([
      { id: 'call_0', name: 'checkout', arguments: '{"orderId":"o1"}', replay: 'safe' },
      { id: 'call_0-2', name: 'checkout', arguments: '{"orderId":"o2"}', replay: 'safe', modelId: 'call_0' },
    ])
    const results = recordsOf(entries, 'harness.tool.result')
    expect(results.map((r) => [r.toolCallId, r.result])).toEqual([
      ['call_0', { charged: 'ch_o1' }],
      ['call_0-2', { charged: 'ch_o2' }],
    ])
    expect(recordsOf(entries, 'harness.step').map((r) => [r.toolCallId, r.name])).toEqual([
      ['call_0', 'charge'],
      ['call_0', 'invoice'],
      ['call_0-2', 'charge'],
      ['call_0-2', 'invoice'],
    ])
    expect(recordsOf(entries, 'app.receipt').map((r) => r.orderId)).toEqual(['o1', 'o2'])
    const last = adapter.requests.at(-1)!
    expectConsistentHistory(last as never)
    const answer = last.find((m) => m.role === 'tool' && m.toolCallId === 'call_0-2')
    expect(JSON.parse(String(answer?.content))).toEqual({ charged: 'ch_o2' })
  })

  it('a reused id is renamed past every id the session has, also past an earlier rename', async () => {
    const world = createWorld()
    const billing = fakeBilling()
    const adapter = replies([
      { toolCalls: [{ id: 'call_0', name: 'checkout', args: { orderId: 'o1' } }] },
      'one',
      { toolCalls: [{ id: 'call_0-2', name: 'checkout', args: { orderId: 'o2' } }] },
      'two',
      { toolCalls: [{ id: 'call_0', name: 'checkout', args: { orderId: 'o3' } }] },
      'three',
    ])
    const harness = defineHarness({ name: 'shop', adapter, tools: [checkoutTool(billing)] })
    const session = await world.start(harness, 'host').host.open({ sessionId: 'reuse' })
    for (const prompt of ['a', 'b', 'c']) await drain(session.send(prompt))
    expect(callsOf(await session.entries()).map((c) => c.id)).toEqual(['call_0', 'call_0-2', 'call_0-3'])
    expect(new Set(billing.charges.values())).toEqual(new Set(['o1', 'o2', 'o3']))
  })

  it('the same id twice in one batch: both calls run, each under its own id, and the model sees one result per call', async () => {
    const world = createWorld()
    const billing = fakeBilling()
    const adapter = replies([
      {
        toolCalls: [
          { id: 'dup', name: 'checkout', args: { orderId: 'o1' } },
          { id: 'dup', name: 'checkout', args: { orderId: 'o2' } },
        ],
      },
      'Both placed.',
    ])
    const harness = defineHarness({ name: 'shop', adapter, tools: [checkoutTool(billing)] })
    const session = await world.start(harness, 'host').host.open({ sessionId: 'batch' })
    await drain(session.send('buy both'))
    const entries = await session.entries()
    expect(callsOf(entries).map((c) => [c.id, c.arguments, c.modelId])).toEqual([
      ['dup', '{"orderId":"o1"}', undefined],
      ['dup-2', '{"orderId":"o2"}', 'dup'],
    ])
    expect([...billing.charges.entries()].sort()).toEqual([
      ['batch:dup-2:charge', 'o2'],
      ['batch:dup:charge', 'o1'],
    ])
    expect(
      recordsOf(entries, 'harness.tool.result')
        .map((r) => [r.toolCallId, r.result])
        .sort(),
    ).toEqual([
      ['dup', { charged: 'ch_o1' }],
      ['dup-2', { charged: 'ch_o2' }],
    ])
    expectConsistentHistory(adapter.requests.at(-1) as never)
  })

  for (const point of ['before', 'after'] as const) {
    it(`a reused id cut by a crash ${point} its first step was logged resumes with its own steps`, async () => {
      const world = createWorld()
      const billing = fakeBilling()
      const script: ScriptedReply[] = [
        { toolCalls: [{ id: 'call_0', name: 'checkout', args: { orderId: 'o1' } }] },
        'Order o1 is placed.',
        { toolCalls: [{ id: 'call_0', name: 'checkout', args: { orderId: 'o2' } }] },
        'Order o2 is placed.',
      ]
      const first = world.start(defineHarness({ name: 'shop', adapter: replies(script), tools: [checkoutTool(billing)] }), 'host-1')
      const session = await first.host.open({ sessionId: 'crash' })
      await drain(session.send('buy o1'))
      first.store.crashOnAppend(isStepOf('charge', 'ch_o2'), point)
      await runUntilCrash(first, session.send('buy o2'))

      world.expireLeases()
      // The restarted process's model continues the conversation where the log says it is.
      const resumed = defineHarness({ name: 'shop', adapter: replies(['Order o2 is placed.']), tools: [checkoutTool(billing)] })
      const reopened = await world.start(resumed, 'host-2').host.open({ sessionId: 'crash' })
      await drain(reopened.resume())
      const entries = await reopened.entries()
      expect(recordsOf(entries, 'harness.step').map((r) => [r.toolCallId, r.name, r.value])).toEqual([
        ['call_0', 'charge', { id: 'ch_o1' }],
        ['call_0', 'invoice', { sent: 'ch_o1' }],
        ['call_0-2', 'charge', { id: 'ch_o2' }],
        ['call_0-2', 'invoice', { sent: 'ch_o2' }],
      ])
      expect([...billing.charges.keys()]).toEqual(['crash:call_0:charge', 'crash:call_0-2:charge'])
      expect(billing.invoices).toEqual(['crash:call_0:invoice', 'crash:call_0-2:invoice'])
      // 'before': the charge ran again with the same key and was refused; 'after': it did not run again.
      expect(billing.attempts).toBe(point === 'before' ? 5 : 4)
      expect(recordsOf(entries, 'harness.tool.result').map((r) => [r.toolCallId, r.result])).toEqual([
        ['call_0', { charged: 'ch_o1' }],
        ['call_0-2', { charged: 'ch_o2' }],
      ])
      expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(2)
    })
  }
})
