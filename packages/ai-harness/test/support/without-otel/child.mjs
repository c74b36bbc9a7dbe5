// Runs a durable session (a step that fails once and retries) in a process where `@opentelemetry/api` cannot be loaded,
// and prints what happened as JSON.
import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool } from '@tanstack/ai-harness'
import { drain, scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { z } from 'zod'

const otel = await import('@opentelemetry/api').then(
  () => 'loaded',
  (error) => error.code,
)
const tool = durableTool(toolDefinition({ name: 'work', description: 'w', inputSchema: z.object({}) }), async (_a, { step }) =>
  step.do('flaky', { attempts: 2, delayMs: 0 }, ({ attempt }) => {
    if (attempt === 1) throw new Error('once')
    return 'ok'
  }),
)
const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'work', args: {} }] } : 'Done.'))
const host = createHost({ store: memoryStore(), harnesses: defineHarness({ name: 'h', adapter, tools: [tool] }) })
const session = await host.open({ sessionId: 's' })
await drain(session.send('go'))
const records = (await session.entries()).map((e) => e.record)
await session.close()
process.stdout.write(
  JSON.stringify({
    otel,
    types: records.map((r) => r.type),
    traced: records.some((r) => 'trace' in r),
  }),
)
