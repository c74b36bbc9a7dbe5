import { randomBytes } from 'node:crypto'
import type pg from 'pg'

/** One call billing received, as its ledger keeps it. */
export interface BillingCall {
  kind: 'charge' | 'invoice'
  orderId: string
  /** `done`: performed; `refused`: a repeat of an idempotency key billing honoured before. */
  outcome: 'done' | 'refused'
  /** The charge or invoice id the caller got back. */
  ref: string
  /** The server process that made the call. */
  pid: number
}

/**
 * A payment API of the shop, in the app's PostgreSQL: every call is a row of its ledger,
 * and a call with an idempotency key honoured before is refused (it returns the first
 * result and charges nothing). Being in the database, it is one ledger for both server
 * processes, and it outlives a SIGKILL of either.
 */
export class Billing {
  readonly #pool: pg.Pool
  readonly #table: string

  constructor(pool: pg.Pool, schema: string) {
    this.#pool = pool
    this.#table = `"${schema}".shop_billing`
  }

  /** Creates the ledger table when it is missing. */
  static async migrate(pool: pg.Pool, schema: string): Promise<void> {
    await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
    await pool.query(
      `CREATE TABLE IF NOT EXISTS "${schema}".shop_billing (
        id bigserial PRIMARY KEY, kind text NOT NULL, key text NOT NULL, order_id text NOT NULL,
        outcome text NOT NULL, ref text NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT now())`,
    )
    await pool.query(`CREATE UNIQUE INDEX IF NOT EXISTS shop_billing_done ON "${schema}".shop_billing (kind, key) WHERE outcome = 'done'`)
  }

  charge(orderId: string, idempotencyKey: string): Promise<{ chargeId: string }> {
    return this.#call('charge', orderId, idempotencyKey, `ch_${randomBytes(5).toString('hex')}`).then((ref) => ({ chargeId: ref }))
  }

  invoice(orderId: string, idempotencyKey: string): Promise<{ invoiceId: string }> {
    return this.#call('invoice', orderId, idempotencyKey, `in_${randomBytes(5).toString('hex')}`).then((ref) => ({ invoiceId: ref }))
  }

  /** Every call, oldest first. */
  async calls(): Promise<BillingCall[]> {
    const { rows } = await this.#pool.query(`SELECT kind, order_id, outcome, ref, pid FROM ${this.#table} ORDER BY id`)
    return rows.map((r) => ({ kind: r.kind, orderId: r.order_id, outcome: r.outcome, ref: r.ref, pid: r.pid }))
  }

  /** Performs the call once per key (the unique index decides a race); a repeat is logged as refused. */
  async #call(kind: BillingCall['kind'], orderId: string, key: string, ref: string): Promise<string> {
    const done = await this.#pool.query(
      `INSERT INTO ${this.#table} (kind, key, order_id, outcome, ref, pid) VALUES ($1, $2, $3, 'done', $4, $5)
       ON CONFLICT (kind, key) WHERE outcome = 'done' DO NOTHING RETURNING ref`,
      [kind, key, orderId, ref, process.pid],
    )
    if (done.rows.length === 1) return ref
    const first = await this.#pool.query(`SELECT ref FROM ${this.#table} WHERE kind = $1 AND key = $2 AND outcome = 'done'`, [kind, key])
    const earlier = String(first.rows[0].ref)
    await this.#pool.query(`INSERT INTO ${this.#table} (kind, key, order_id, outcome, ref, pid) VALUES ($1, $2, $3, 'refused', $4, $5)`, [
      kind,
      key,
      orderId,
      earlier,
      process.pid,
    ])
    return earlier
  }
}
