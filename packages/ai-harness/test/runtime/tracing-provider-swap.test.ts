import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, createWorld, drain } from '../support/harness.js'

// The runtime keeps its tracer between spans (a step starts several); an app or a test
// that swaps its SDK (trace.disable(), then a new provider) must still get every span.
const steps = defineHarness({
  name: 'steps',
  adapter: batchModel([{ name: 'work' }]),
  tools: [
    durableTool(toolDefinition({ name: 'work', description: 'One step', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('one', () => 1)
      return 'ok'
    }),
  ],
})

function sdk() {
  const exporter = new InMemorySpanExporter()
  return { exporter, provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) }
}

afterAll(() => trace.disable())

describe('tracing across a change of the global tracer provider', () => {
  it('spans go to the provider registered now, not to one registered before', async () => {
    const world = createWorld()
    const first = sdk()
    trace.setGlobalTracerProvider(first.provider)
    await drain((await world.start(steps, 'host-1').host.open({ sessionId: 's1' })).send('go'))
    expect(first.exporter.getFinishedSpans().filter((s) => s.name === 'harness.step')).toHaveLength(1)

    trace.disable()
    const second = sdk()
    trace.setGlobalTracerProvider(second.provider)
    const before = first.exporter.getFinishedSpans().length
    await drain((await world.start(steps, 'host-2').host.open({ sessionId: 's2' })).send('go'))
    expect(second.exporter.getFinishedSpans().filter((s) => s.name === 'harness.step')).toHaveLength(1)
    expect(second.exporter.getFinishedSpans().some((s) => s.name === 'harness.store.append')).toBe(true)
    expect(first.exporter.getFinishedSpans()).toHaveLength(before)
  })
})
