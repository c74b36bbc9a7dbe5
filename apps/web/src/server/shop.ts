import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type Harness } from '@tanstack/ai-harness'
import { z } from 'zod'
import type { Billing } from './billing.js'
import { ShopModel } from './model.js'
import type { Pause } from './pause.js'

/** How long billing's invoice call takes in the demo, so a person sees the tool run. */
const INVOICE_MS = 600

/**
 * The shop's agent: the scripted model and the checkout tool of apps/checkout in small,
 * a charge and then an invoice, each a `step.do` whose idempotency key goes to billing.
 * Between the two is the pause `charged:<orderId>`, where the browser test kills the
 * server process: the step that charged is in the log, the invoice is not.
 */
export function shopHarness(billing: Billing, pause: Pause, wordMs: number): Harness {
  const checkout = durableTool(
    toolDefinition({
      name: 'checkout',
      description: 'Charge an order and send its invoice',
      inputSchema: z.object({ orderId: z.string() }),
    }),
    async ({ orderId }, { step }) => {
      const { chargeId } = await step.do(`charge:${orderId}`, ({ idempotencyKey }) => billing.charge(orderId, idempotencyKey))
      await pause(`charged:${orderId}`, INVOICE_MS)
      const { invoiceId } = await step.do(`invoice:${orderId}`, ({ idempotencyKey }) => billing.invoice(orderId, idempotencyKey))
      return { chargeId, invoiceId }
    },
  )
  return defineHarness({ name: 'shop', adapter: new ShopModel(pause, wordMs), tools: [checkout] })
}
