import { toolDefinition } from '@tanstack/ai'
import { durableTool } from '@tanstack/ai-harness'
import type { UndoContext } from '@tanstack/ai-harness/log'
import { z } from 'zod'
import type { BillingService } from '../services/billing.js'
import type { Mailer } from '../services/mailer.js'

/** The systems the tools change. */
export interface CheckoutServices {
  billing: Pick<BillingService, 'charge' | 'sendInvoice' | 'refund'>
  mailer: Pick<Mailer, 'send' | 'outbox'>
  /** Progress lines, for what verify finds. */
  log?: (line: string) => void
}

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

/**
 * The seed page's `checkout` and `notify` tools. Each billing `fn` passes the step's
 * `idempotencyKey` on to billing, as the page's rules ask, so a charge that runs again
 * after a crash is refused instead of charging twice. The charge has an `undo` (a refund)
 * for a call that fails later. The mailer takes no key (an SMTP relay), so `notify`'s step
 * has `verify`: after a crash between sending and storing, it finds the email in the
 * outbox instead of sending it again.
 */
export function checkoutTools({ billing, mailer, log = () => {} }: CheckoutServices, options: CheckoutToolOptions = {}) {
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
      // A charge that a later failure of the call (the invoice, say) must take back: undo refunds it.
      const payment = await step.do(
        `charge:${orderId}`,
        // The value's type is written out: TypeScript types undo before it has seen fn's context-taking return.
        { undo: (charge: { id: string }, { idempotencyKey }: UndoContext) => billing.refund(charge.id, { idempotencyKey }) },
        ({ idempotencyKey }) => billing.charge(orderId, { idempotencyKey }),
      )
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
      // The mailer takes no idempotency key: the step's key goes in a header, and after a crash
      // verify looks for it in the outbox before anything is sent again.
      const mail = await step.do(
        `send:${to}`,
        {
          verify: ({ idempotencyKey }) => {
            const sent = mailer.outbox(idempotencyKey)
            log(sent ? `verify: ${sent.id} is in the mailer's outbox; not sending it again` : 'verify: nothing in the outbox; sending')
            return sent ? { done: sent } : 'not-done'
          },
        },
        ({ idempotencyKey }) => mailer.send(to, body, { ref: idempotencyKey }),
      )
      return { mailId: mail.id }
    },
  )

  return { checkout, notify }
}
