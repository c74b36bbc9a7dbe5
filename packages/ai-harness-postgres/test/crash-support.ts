/**
 * Shared by the crash test (`crash.test.ts`) and the process it kills (`crash-child.ts`):
 * a fake billing service whose state is in PostgreSQL, so it survives SIGKILL, and the
 * seed's checkout tool on top of it.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type Harness } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import type pg from 'pg'
import { z } from 'zod'

/** The session ids of one run, and the order each one checks out. */
export const sessionIdOf = (i: number) => `order-session-${i}`
export const orderIdOf = (i: number) => `o${i}`

/** The billing tables, in the run's own schema next to the store's tables. */
export function billingDdl(schema: string): string {
  const s = `"${schema}"`
  return `
CREATE TABLE IF NOT EXISTS ${s}.billing_charges (
  idempotency_key text COLLATE "C" PRIMARY KEY,
  charge_id text NOT NULL UNIQUE,
  order_id text NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.billing_invoices (
  idempotency_key text COLLATE "C" PRIMARY KEY,
  charge_id text NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.billing_attempts (
  id bigserial PRIMARY KEY,
  operation text NOT NULL CHECK (operation IN ('charge', 'invoice')),
  idempotency_key text COLLATE "C" NOT NULL,
  subject text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('created', 'refused')),
  pid integer NOT NULL
);`
}

/**
 * A payment service that refuses a repeated idempotency key, as real payment APIs do:
 * the second call returns the first result and creates nothing. Every attempt that
 * reaches it is counted, with its outcome, in the same transaction as its effect. The
 * charge id is random, so a charge made twice could never pass for one.
 */
export class PgBilling {
  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    /** Network time around each call, so a kill can land while a call is in flight or its reply is on the way. */
    private readonly latencyMs: () => number = () => 0,
    /** Called when a call's effect is committed, before the reply travels back. */
    private readonly onCommitted: () => void = () => {},
  ) {}

  charge(orderId: string, idempotencyKey: string): Promise<{ id: string }> {
    return this.#call('charge', idempotencyKey, orderId, async (client) => {
      const s = `"${this.schema}"`
      const inserted = await client.query<{ charge_id: string }>(
        `INSERT INTO ${s}.billing_charges (idempotency_key, charge_id, order_id)
         VALUES ($1, 'ch_' || substr(md5(random()::text || clock_timestamp()::text), 1, 16), $2)
         ON CONFLICT (idempotency_key) DO NOTHING RETURNING charge_id`,
        [idempotencyKey, orderId],
      )
      if (inserted.rows[0]) return { created: true, value: { id: inserted.rows[0].charge_id } }
      const existing = await client.query<{ charge_id: string; order_id: string }>(
        `SELECT charge_id, order_id FROM ${s}.billing_charges WHERE idempotency_key = $1`,
        [idempotencyKey],
      )
      const row = existing.rows[0]
      if (!row) throw new Error(`billing: key ${idempotencyKey} conflicted but has no charge`)
      // Like Stripe: a key reused with other parameters is an error, not a refusal.
      if (row.order_id !== orderId) throw new Error(`billing: key ${idempotencyKey} was used for order ${row.order_id}`)
      return { created: false, value: { id: row.charge_id } }
    })
  }

  sendInvoice(chargeId: string, idempotencyKey: string): Promise<void> {
    return this.#call('invoice', idempotencyKey, chargeId, async (client) => {
      const s = `"${this.schema}"`
      const inserted = await client.query(
        `INSERT INTO ${s}.billing_invoices (idempotency_key, charge_id) VALUES ($1, $2)
         ON CONFLICT (idempotency_key) DO NOTHING RETURNING charge_id`,
        [idempotencyKey, chargeId],
      )
      return { created: inserted.rowCount === 1, value: undefined }
    })
  }

  async #call<T>(
    operation: 'charge' | 'invoice',
    idempotencyKey: string,
    subject: string,
    body: (client: pg.PoolClient) => Promise<{ created: boolean; value: T }>,
  ): Promise<T> {
    await sleep(this.latencyMs())
    const client = await this.pool.connect()
    let outcome: { created: boolean; value: T }
    try {
      await client.query('BEGIN')
      outcome = await body(client)
      await client.query(
        `INSERT INTO "${this.schema}".billing_attempts (operation, idempotency_key, subject, outcome, pid) VALUES ($1, $2, $3, $4, $5)`,
        [operation, idempotencyKey, subject, outcome.created ? 'created' : 'refused', process.pid],
      )
      await client.query('COMMIT')
      this.onCommitted()
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
    await sleep(this.latencyMs())
    return outcome.value
  }
}

/** The record the checkout tool appends with its result. */
export type ReceiptRecord = {
  type: 'app.receipt'
  orderId: string
  chargeId: string
  toolCallId: string
}

/** The seed's checkout harness: a scripted model calls `checkout` for the order in the prompt, then answers. */
export function checkoutHarness(billing: PgBilling): Harness {
  const definition = toolDefinition({
    name: 'checkout',
    description: 'Charge an order and send the invoice',
    inputSchema: z.object({ orderId: z.string() }),
  })
  const checkout = durableTool(definition, async ({ orderId }, { step, append, toolCallId }) => {
    const payment = await step.do(`charge:${orderId}`, ({ idempotencyKey }) => billing.charge(orderId, idempotencyKey))
    await step.do(`invoice:${payment.id}`, ({ idempotencyKey }) => billing.sendInvoice(payment.id, idempotencyKey))
    const receipt: ReceiptRecord = { type: 'app.receipt', orderId, chargeId: payment.id, toolCallId: String(toolCallId) }
    append([receipt])
    return { chargeId: payment.id }
  })
  const model = scriptedText(({ messages }) => {
    const last = messages[messages.length - 1]
    if (last?.role === 'user') {
      const orderId = String(last.content).replace(/^checkout /, '')
      return { text: 'Placing the order.', toolCalls: [{ name: 'checkout', args: { orderId } }] }
    }
    return FINAL_ANSWER
  })
  return defineHarness({ name: 'shop', adapter: model, tools: [checkout] })
}

export const FINAL_ANSWER = 'Your order is placed.'

/** What the parent sends the child on stdin, one JSON line. */
export interface ChildTask {
  schema: string
  sessions: number
  hostId: string
  leaseMs: number
  /** Stay alive after the work is done, until stdin closes (so the kill always lands on a live process). */
  linger: boolean
}

/** What the child prints after `done `, one JSON line. */
export interface ChildReport {
  ms: number
  actions: Array<{ sessionId: string; action: 'send' | 'resume' | 'none'; neededRecovery: boolean }>
}

/** mulberry32: a small seeded PRNG, so every random choice of a test comes from its printed seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
