import { toolDefinition } from '@tanstack/ai'
import { durableTool } from '@tanstack/ai-harness'
import { z } from 'zod'
import type { BillingService } from '../services/billing.js'
import type { Mailer } from '../services/mailer.js'

/** The systems the tools change. */
export interface CheckoutServices {
  billing: Pick<BillingService, 'charge' | 'sendInvoice'>
  mailer: Pick<Mailer, 'send'>
}

/**
 * The seed page's `checkout` and `notify` tools, as written there. The one addition:
 * each `fn` passes the step's `idempotencyKey` on to the service, as the page's rules
 * ask ("Pass it to the system that does the side effect"), so a step that runs again
 * after a crash is refused by billing or the mailer instead of charging twice.
 */
export function checkoutTools({ billing, mailer }: CheckoutServices) {
  const checkout = durableTool(
    toolDefinition({
      name: 'checkout',
      description: 'Charge an order and send the invoice',
      inputSchema: z.object({ orderId: z.string() }),
    }),
    async ({ orderId }, { step }) => {
      const payment = await step.do(`charge:${orderId}`, ({ idempotencyKey }) => billing.charge(orderId, { idempotencyKey }))
      await step.do(`invoice:${payment.id}`, ({ idempotencyKey }) => billing.sendInvoice(payment.id, { idempotencyKey }))
      return { chargeId: payment.id }
    },
  )

  const notify = durableTool(
    toolDefinition({
      name: 'notify',
      description: 'Email a customer',
      inputSchema: z.object({ to: z.string(), body: z.string() }),
    }),
    async ({ to, body }, { step }) => {
      const mail = await step.do(`send:${to}`, ({ idempotencyKey }) => mailer.send(to, body, { idempotencyKey }))
      return { mailId: mail.id }
    },
    { replay: 'never' },
  )

  return { checkout, notify }
}
