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
/** The price of every order in this small shop, in EUR: what `--ask` asks the customer to confirm. */
export const ORDER_AMOUNT_EUR = 42

/** The question `--ask` puts before the charge: the customer types the amount to confirm it. */
export const confirmAmountSchema = z.object({
  amount: z.number().positive().describe('the amount to charge, in EUR, as quoted'),
})

export interface CheckoutToolOptions {
  /** Before charging, ask the customer to confirm the amount (`step.ask`); a different amount charges nothing. */
  ask?: boolean
}

export function checkoutTools({ billing, mailer }: CheckoutServices, options: CheckoutToolOptions = {}) {
  const checkout = durableTool(
    toolDefinition({
      name: 'checkout',
      description: 'Charge an order and send the invoice',
      inputSchema: z.object({ orderId: z.string() }),
    }),
    async ({ orderId }, { step }) => {
      if (options.ask) {
        const confirmed = await step.ask({
          name: `confirm-amount:${orderId}`,
          message: `Charge ${ORDER_AMOUNT_EUR.toFixed(2)} EUR for order ${orderId}? Type the amount to confirm it.`,
          schema: confirmAmountSchema,
        })
        if (confirmed.amount !== ORDER_AMOUNT_EUR) {
          return {
            charged: false,
            reason: `the customer confirmed ${confirmed.amount} EUR, not ${ORDER_AMOUNT_EUR} EUR: nothing was charged`,
          }
        }
      }
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
