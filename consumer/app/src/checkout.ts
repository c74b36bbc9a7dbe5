import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type Harness } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import type { FileBilling } from './billing.js'

/**
 * The checkout agent as a user of the published packages writes it: one durable tool
 * with two steps, and a scripted model (no network) that calls it once.
 */
export function checkoutHarness(billing: FileBilling, hooks: { afterCharge?: () => Promise<void> } = {}): Harness {
  const checkout = durableTool(
    toolDefinition({
      name: 'checkout',
      description: 'Charge an order and send the invoice',
      inputSchema: z.object({ orderId: z.string() }),
    }),
    async ({ orderId }, { step }) => {
      const payment = await step.do(`charge:${orderId}`, ({ idempotencyKey }) => billing.charge(orderId, idempotencyKey))
      await step.do(`invoice:${payment.id}`, async ({ idempotencyKey }) => {
        await hooks.afterCharge?.()
        billing.sendInvoice(payment.id, idempotencyKey)
      })
      return { chargeId: payment.id }
    },
  )
  const model = scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'checkout', args: { orderId: 'o1' } }] } : 'Order o1 is paid.',
  )
  return defineHarness({ name: 'shop', adapter: model, tools: [checkout] })
}

/** What each run prints as its last line, for the test that drives it. */
export function report(billing: FileBilling, extra: Record<string, unknown>): string {
  const lines = billing.lines()
  return JSON.stringify({
    charges: lines.filter((l) => l.op === 'charge' && l.outcome === 'created').length,
    chargeCalls: lines.filter((l) => l.op === 'charge').length,
    invoices: lines.filter((l) => l.op === 'invoice' && l.outcome === 'created').length,
    ...extra,
  })
}
