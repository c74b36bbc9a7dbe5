import * as otel from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { toolDefinition } from '@tanstack/ai'
import { createWorker, defineHarness, durableTool, type Harness } from '@tanstack/ai-harness'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import type { OtelApi } from '../../src/runtime/tracing.js'
import { batchModel, createWorld, drain, isStepNamed, TEST_LEASE_MS, recordsOf, runUntilCrash } from '../support/harness.js'
import { recordSpans } from '../support/spans.js'

// The runtime writes out the few parts of the API it uses (so its types need no OpenTelemetry): the real API must fit
// them. Checked by the typecheck of this package.
expectTypeOf(otel).toMatchTypeOf<OtelApi>()

const { exporter, named } = recordSpans()
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const idOf = (span: ReadableSpan) => span.spanContext().spanId
const traceOf = (span: ReadableSpan) => span.spanContext().traceId

/** A checkout whose charge fails once (then succeeds), and an invoice step. */
function shop(calls: string[]): Harness {
  const checkout = durableTool(
    toolDefinition({ name: 'checkout', description: 'Charge and invoice', inputSchema: z.object({}) }),
    async (_a, { step, append }) => {
      const charge = await step.do('charge', { attempts: 2, delayMs: 0 }, ({ attempt }) => {
        calls.push(`charge ${attempt}`)
        if (attempt === 1) throw new Error('gateway timeout')
        return { id: 'ch_1' }
      })
      await step.do('invoice', () => {
        calls.push('invoice')
      })
      append([{ type: 'app.receipt', chargeId: charge.id }])
      return charge
    },
  )
  return defineHarness({ name: 'shop', adapter: batchModel([{ name: 'checkout' }]), tools: [checkout] })
}

describe('OpenTelemetry spans of a session', () => {
  it('a turn, its tool call, each step attempt and the store calls are spans of one trace, each under its parent', async () => {
    const world = createWorld()
    const calls: string[] = []
    const session = await world.start(shop(calls), 'host-1').host.open({ sessionId: 'order-1' })
    await drain(session.send('check out'))
    expect(calls).toEqual(['charge 1', 'charge 2', 'invoice'])

    const [turn] = named('harness.turn')
    expect(named('harness.turn')).toHaveLength(1)
    expect(turn!.attributes).toMatchObject({
      'harness.session.id': 'order-1',
      'harness.host.id': 'host-1',
      'harness.name': 'shop',
      'harness.turn.resumed': false,
      'harness.outcome': 'finished',
    })
    const [started] = recordsOf(await world.read('order-1'), 'harness.turn.started')
    expect(turn!.attributes['harness.turn.id']).toBe(started!.turnId)
    expect(started!.trace).toEqual({ traceId: traceOf(turn!), spanId: idOf(turn!), flags: 1 })

    const [tool] = named('harness.tool.call')
    const [result] = recordsOf(await world.read('order-1'), 'harness.tool.result')
    expect(parentOf(tool!)).toBe(idOf(turn!))
    expect(tool!.attributes).toMatchObject({
      'harness.session.id': 'order-1',
      'harness.tool.call.id': result!.toolCallId,
      'harness.tool.name': 'checkout',
      'harness.host.id': 'host-1',
      'harness.outcome': 'ok',
    })

    const steps = named('harness.step')
    expect(
      steps.map((s) => [s.attributes['harness.step.name'], s.attributes['harness.step.attempt'], s.attributes['harness.outcome']]),
    ).toEqual([
      ['charge', 1, 'failed'],
      ['charge', 2, 'ran'],
      ['invoice', 1, 'ran'],
    ])
    for (const step of steps) {
      expect(parentOf(step)).toBe(idOf(tool!))
      expect(step.attributes).toMatchObject({
        'harness.step.replayed': false,
        'harness.tool.call.id': result!.toolCallId,
        'harness.host.id': 'host-1',
      })
    }
    expect(steps[0]!.status).toMatchObject({ code: 2, message: 'Error: gateway timeout' })
    const chargeRecord = recordsOf(await world.read('order-1'), 'harness.step')[0]!
    expect(steps[1]!.attributes['harness.step.bytes']).toBe(Buffer.byteLength(JSON.stringify(chargeRecord)))

    // Store calls made while the turn runs nest inside it: under the tool call, the start and failure of the
    // first attempt (a step with retries logs each start), the second's start and value, the plain step, then the result with its app record.
    const appends = named('harness.store.append').filter((s) => traceOf(s) === traceOf(turn!))
    const stepAppends = appends.filter((s) => parentOf(s) === idOf(tool!))
    expect(stepAppends.map((s) => s.attributes['harness.store.records'])).toEqual([1, 1, 1, 1, 1, 2])
    // Under the turn itself: the model's tool call, then its answer with the end of the turn.
    const turnAppends = appends.filter((s) => parentOf(s) === idOf(turn!))
    expect(turnAppends.map((s) => s.attributes['harness.store.records'])).toEqual([1, 2])
    const seqs = appends.map((s) => Number(s.attributes['harness.store.seq']))
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    for (const append of appends) expect(append.attributes).toMatchObject({ 'harness.session.id': 'order-1', 'harness.host.id': 'host-1' })
    expect(appends.every((s) => s.kind === 2)).toBe(true)
  })

  it('a crashed turn and its resumed run are one trace: the new run is a child of the logged turn span, and a replayed step says so', async () => {
    const world = createWorld()
    const calls: string[] = []
    const harness = shop(calls)
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend(isStepNamed('charge'), 'after')
    await runUntilCrash(first, (await first.host.open({ sessionId: 'order-2' })).send('check out'))
    const [started] = recordsOf(await world.read('order-2'), 'harness.turn.started')
    const logged = started!.trace as { traceId: string; spanId: string }
    expect(logged.traceId).toMatch(/^[0-9a-f]{32}$/)
    // The first run died: its turn span never ended, but its finished step attempt is in the trace.
    expect(named('harness.turn')).toEqual([])
    expect(named('harness.step').map((s) => [traceOf(s), s.attributes['harness.outcome']])).toEqual([[logged.traceId, 'failed']])

    world.expireLeases()
    await drain((await world.start(harness, 'host-2').host.open({ sessionId: 'order-2' })).resume())
    expect(calls).toEqual(['charge 1', 'charge 2', 'invoice'])
    const [resumed] = named('harness.turn')
    expect(traceOf(resumed!)).toBe(logged.traceId)
    expect(parentOf(resumed!)).toBe(logged.spanId)
    expect(resumed!.attributes).toMatchObject({
      'harness.turn.resumed': true,
      'harness.host.id': 'host-2',
      'harness.turn.id': started!.turnId,
    })

    const steps = named('harness.step').filter((s) => s.attributes['harness.host.id'] === 'host-2')
    expect(
      steps.map((s) => [s.attributes['harness.step.name'], s.attributes['harness.step.replayed'], s.attributes['harness.outcome']]),
    ).toEqual([
      ['charge', true, 'replayed'],
      ['invoice', false, 'ran'],
    ])
    const chargeRecord = recordsOf(await world.read('order-2'), 'harness.step')[0]!
    expect(steps[0]!.attributes['harness.step.bytes']).toBe(Buffer.byteLength(JSON.stringify(chargeRecord)))
    for (const span of exporter
      .getFinishedSpans()
      .filter((s) => s.attributes['harness.host.id'] === 'host-2' && !s.name.startsWith('harness.store'))) {
      expect(traceOf(span), span.name).toBe(logged.traceId)
    }
  })

  it("a worker's poll is a span; the run it resumes joins the turn's trace and links to the poll", async () => {
    const world = createWorld()
    let attempts = 0
    const tool = durableTool(toolDefinition({ name: 'flaky', description: 'f', inputSchema: z.object({}) }), async (_a, { step }) =>
      step.do('call', { attempts: 2, delayMs: 60_000 }, () => {
        attempts++
        if (attempts === 1) throw new Error('try later')
        return 'ok'
      }),
    )
    const harness = defineHarness({ name: 'parker', adapter: batchModel([{ name: 'flaky' }]), tools: [tool], parkAfterMs: 1_000 })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 'park' })).send('go'))
    const [first] = named('harness.turn')
    expect(first!.attributes['harness.outcome']).toBe('parked')
    world.clock.advance(60_000)
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: harness,
      clock: world.clock,
      leaseMs: TEST_LEASE_MS,
      workerId: 'worker-7',
    })
    expect((await worker.poll()).resumed).toEqual(['park'])
    await worker.stop()
    const [poll] = named('harness.worker.poll')
    expect(poll!.attributes).toMatchObject({ 'harness.worker.id': 'worker-7', 'harness.worker.claimed': 1, 'harness.worker.resumed': 1 })
    const resumed = named('harness.turn').find((s) => s.attributes['harness.turn.resumed'] === true)!
    expect(traceOf(resumed)).toBe(traceOf(first!))
    expect(parentOf(resumed)).toBe(idOf(first!))
    expect(resumed.links.map((l) => l.context.spanId)).toEqual([idOf(poll!)])
    expect(resumed.attributes['harness.host.id']).toBe('worker-7')
  })

  it('no attribute, status or name of any span holds a secret of the session', async () => {
    const world = createWorld()
    const secret = 'sk_live_trace_5e9Kq2'
    const tool = durableTool(
      toolDefinition({ name: 'leaky', description: 'l', inputSchema: z.object({}) }),
      async (_a, { step, secret: read }) => {
        const key = await read('stripe')
        await step
          .do('call', { attempts: 2, delayMs: 0 }, () => {
            throw new Error(`refused key ${key}`)
          })
          .catch(() => {})
        throw new Error(`gave up with ${key}`)
      },
    )
    const harness = defineHarness({ name: 'leaky', adapter: batchModel([{ name: 'leaky' }]), tools: [tool] })
    const session = await world.start(harness, 'host').host.open({ sessionId: 'leak', secrets: { stripe: secret } })
    await drain(session.send('go'))
    const spans = exporter.getFinishedSpans()
    expect(spans.some((s) => s.name === 'harness.step' && s.status.message === 'Error: refused key [secret]')).toBe(true)
    expect(spans.some((s) => s.name === 'harness.tool.call' && s.status.message?.includes('gave up with [secret]'))).toBe(true)
    const seen = JSON.stringify(
      spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events, links: s.links })),
    )
    expect(seen).not.toContain(secret)
  })
})
