import { SpanStatusCode } from '@opentelemetry/api'
import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { askHarness, faultWorld, gate, stepHarness, within } from '../support/faults.js'
import { codeOf, drain } from '../support/harness.js'
import { recordSpans } from '../support/spans.js'

// Spans must end, and end with the right status: a park is no error, a failed model call is
// no stop. Spans that never end leak in the SDK and never reach the exporter.
const { named } = recordSpans()

describe('the spans of a run that parks', () => {
  it('a call parked on a question ends its span without ERROR status, and the turn says parked', async () => {
    const world = faultWorld()
    await drain((await world.machine(askHarness(), 'host').host.open({ sessionId: 'a' })).send('go'))
    const [call] = named('harness.tool.call')
    expect(call?.attributes['harness.outcome']).toBe('parked')
    expect(call?.status.code).not.toBe(SpanStatusCode.ERROR)
    const [turn] = named('harness.turn')
    expect(turn?.attributes['harness.outcome']).toBe('parked')
    expect(turn?.status.code).not.toBe(SpanStatusCode.ERROR)
  })

  it('a call parked on a long sleep ends its span without ERROR status', async () => {
    const world = faultWorld()
    const napper = defineHarness({
      name: 'napper',
      adapter: stepHarness(() => 1).harness.options.adapter,
      tools: [
        durableTool(toolDefinition({ name: 'work', description: 'Sleeps', inputSchema: z.object({}) }), async (_a, { step }) => {
          await step.sleep('nap', 60_000)
          return 'awake'
        }),
      ],
    })
    await drain((await world.machine(napper, 'host').host.open({ sessionId: 'n' })).send('go'))
    const [call] = named('harness.tool.call')
    expect(call?.attributes['harness.outcome']).toBe('parked')
    expect(call?.status.code).not.toBe(SpanStatusCode.ERROR)
  })
})

describe('spans that must end', () => {
  it('a turn whose first write (harness.turn.started) fails ends its span, failed', async () => {
    const world = faultWorld()
    const { store, host } = world.machine(askHarness(), 'host')
    const session = await host.open({ sessionId: 'w' })
    store.inject({
      match: (call) => call.op === 'append' && (call.args[2] as Array<{ type: string }>).some((r) => r.type === 'harness.turn.started'),
      fault: { kind: 'fail', error: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) },
      times: Number.POSITIVE_INFINITY,
    })
    expect(await codeOf(() => drain(session.send('go')))).not.toBe('none')
    const turns = named('harness.turn')
    expect(turns).toHaveLength(1)
    expect(turns[0]!.status.code).toBe(SpanStatusCode.ERROR)
    expect(turns[0]!.attributes['harness.outcome']).toBe('failed')
  })

  it('a turn that cancel() gave up waiting for ends its span (abandoned)', async () => {
    const world = faultWorld()
    const started = gate()
    const { harness } = stepHarness(() => {
      started.open()
      return new Promise(() => {})
    })
    const session = await world.machine(harness, 'host', { stopTimeoutMs: 50 }).host.open({ sessionId: 's' })
    const stream = drain(session.send('work'))
    await started.promise
    await within(5_000, session.cancel('stop it'), 'cancel')
    await within(5_000, stream, 'the stream')
    const turns = named('harness.turn')
    expect(turns).toHaveLength(1)
    expect(turns[0]!.attributes['harness.outcome']).toBe('abandoned')
  })
})

describe('the outcome of a turn whose model call throws', () => {
  it("is 'failed', not 'stopped'", async () => {
    const world = faultWorld()
    const broken = defineHarness({
      name: 'broken',
      adapter: {
        ...askHarness().options.adapter,
        // biome-ignore lint/correctness/useYield: a model call that fails before its first chunk
        async *chatStream() {
          throw new Error('model unavailable')
        },
      } as never,
    })
    const session = await world.machine(broken, 'host').host.open({ sessionId: 'm' })
    await drain(session.send('hello')).catch(() => {})
    const [turn] = named('harness.turn')
    expect(turn?.attributes['harness.outcome']).toBe('failed')
  })
})
