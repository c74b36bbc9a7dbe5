import { toolDefinition } from '@tanstack/ai'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { expect, it } from 'vitest'
import { z } from 'zod'
import { createHost, defineHarness, durableTool } from '../../src/index.js'
import { scriptedText } from '../../src/testing/index.js'

it('smoke', async () => {
  const calls: string[] = []
  const checkout = durableTool(
    toolDefinition({ name: 'checkout', description: 'c', inputSchema: z.object({ orderId: z.string() }) }),
    async ({ orderId }, { step }) => {
      const payment = await step.do(`charge:${orderId}`, ({ idempotencyKey }) => {
        calls.push(idempotencyKey)
        return { id: 'ch_1' }
      })
      return { chargeId: payment.id }
    },
  )
  const adapter = scriptedText(({ messages }) => {
    const last = messages[messages.length - 1]
    if (last?.role === 'user') return { text: 'Charging.', toolCalls: [{ name: 'checkout', args: { orderId: 'o1' } }] }
    return 'Done.'
  })
  const harness = defineHarness({ name: 'shop', adapter, tools: [checkout] })
  const store = memoryStore()
  const host = createHost({ store, harnesses: harness })
  const session = await host.open({ sessionId: 's1' })
  const chunks = []
  for await (const chunk of session.send('Buy o1')) chunks.push(chunk.type)
  console.log(chunks.join(' '))
  const entries = await session.entries()
  console.log(
    JSON.stringify(
      entries.map((e) => e.record),
      null,
      1,
    ),
  )
  console.log(calls)
  expect(calls).toHaveLength(1)
})
