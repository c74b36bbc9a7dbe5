/**
 * The seed's checkout flow, written once for every runtime: a durable tool with two
 * steps (charge, then invoice), a host whose store dies right after the charge step
 * landed, and a second host on the same data that resumes the turn, then serves the
 * session over `@tanstack/ai-harness/http`. Only Web APIs and
 * the libraries' portable entry points: Bun, Deno and workerd run this same file.
 */
import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool, type HarnessStore } from '@tanstack/ai-harness'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { createHarnessHandler } from '@tanstack/ai-harness/http'
import { crashable, createManualClock, drain, type ManualClock, runUntilCrash, scriptedText } from '@tanstack/ai-harness/testing'
import { z } from 'zod'

/** What one run prints, for the test that spawned it. */
export interface CheckoutReport {
  /** Charges the billing service created (a second call with a seen key is refused). */
  readonly charges: number
  /** Every charge call it got, refused ones included. */
  readonly chargeCalls: number
  readonly invoices: number
  readonly chargesAtCrash: number
  readonly needsRecovery: boolean
  readonly results: readonly unknown[]
  /** The session as `@tanstack/ai-harness/http` serves it afterwards: the status code and the session's status. */
  readonly http: { readonly code: number; readonly status: unknown }
  /** Wall time of the flow, in ms, as the runtime measured it. */
  readonly ms: number
}

/** A store of the flow: `open` is called twice, by the host that dies and by the one that resumes, on the same data. */
export interface FlowStore {
  open(clock: ManualClock): HarnessStore
  close?(store: HarnessStore): Promise<void>
}

/** Like a payment API, it refuses a second call with an idempotency key it has seen. */
function billingService() {
  const calls: Array<{ op: 'charge' | 'invoice'; key: string; created: boolean }> = []
  const call = (op: 'charge' | 'invoice', key: string) => {
    const created = !calls.some((c) => c.op === op && c.key === key && c.created)
    calls.push({ op, key, created })
  }
  return {
    charge(orderId: string, key: string) {
      call('charge', key)
      return { id: `ch_${orderId}` }
    },
    sendInvoice: (_chargeId: string, key: string) => call('invoice', key),
    count: (op: 'charge' | 'invoice', createdOnly: boolean) => calls.filter((c) => c.op === op && (c.created || !createdOnly)).length,
  }
}

function checkoutHarness(billing: ReturnType<typeof billingService>) {
  const checkout = durableTool(
    toolDefinition({
      name: 'checkout',
      description: 'Charge an order and send the invoice',
      inputSchema: z.object({ orderId: z.string() }),
    }),
    async ({ orderId }, { step }) => {
      const payment = await step.do(`charge:${orderId}`, ({ idempotencyKey }) => billing.charge(orderId, idempotencyKey))
      await step.do(`invoice:${payment.id}`, ({ idempotencyKey }) => billing.sendInvoice(payment.id, idempotencyKey))
      return { chargeId: payment.id }
    },
  )
  const model = scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'checkout', args: { orderId: 'o1' } }] } : 'Order o1 is paid.',
  )
  return defineHarness({ name: 'shop', adapter: model, tools: [checkout] })
}

const isChargeStep = (records: readonly LogRecord[]) =>
  records.some((r) => r.type === 'harness.step' && String(r.name).startsWith('charge:'))

/**
 * Runs the flow: the first host's store hangs like a killed process right after the
 * charge step lands; the lease runs out on the manual clock; a second host resumes.
 */
export async function checkoutAcrossCrash(store: FlowStore, sessionId = `order-${crypto.randomUUID()}`): Promise<CheckoutReport> {
  const started = Date.now()
  const billing = billingService()
  const harness = checkoutHarness(billing)
  const clock = createManualClock()
  const leaseMs = 30_000
  const first = crashable(store.open(clock))
  first.crashOnAppend(isChargeStep, 'after')
  const dying = await createHost({ store: first, harnesses: harness, clock, leaseMs, hostId: 'host-1' }).open({ sessionId })
  await runUntilCrash(first, dying.send('Check out order o1'))
  const chargesAtCrash = billing.count('charge', false)

  clock.advance(leaseMs + 1) // the dead host's lease runs out
  const second = store.open(clock)
  const host = createHost({ store: second, harnesses: harness, clock, leaseMs, hostId: 'host-2' })
  const session = await host.open({ sessionId })
  const needsRecovery = session.needsRecovery
  await drain(session.resume())
  const results = (await session.entries()).filter((e) => e.record.type === 'harness.tool.result').map((e) => e.record.result)
  await session.close()
  // Every request allowed: this is a test. An app checks the user in `authorize`.
  const handler = createHarnessHandler({ host, authorize: async () => true })
  const response = await handler(new Request(`http://harness.test/sessions/${encodeURIComponent(sessionId)}`))
  const http = { code: response.status, status: ((await response.json()) as { status?: unknown }).status }
  await store.close?.(second)
  return {
    charges: billing.count('charge', true),
    chargeCalls: billing.count('charge', false),
    invoices: billing.count('invoice', true),
    chargesAtCrash,
    needsRecovery,
    results,
    http,
    ms: Date.now() - started,
  }
}
