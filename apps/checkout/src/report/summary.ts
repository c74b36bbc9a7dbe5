import type { LogEntry } from '@tanstack/ai-harness/store'
import type { LedgerEntry } from '../services/ledger.js'

/** What happened to one order, from the ledgers of billing and the mailer. */
export interface OrderSummary {
  orderId: string
  charges: number
  invoices: number
  /** Charges refunded (the `undo` of the charge step, after a failed invoice). */
  refunds: number
  chargeIds: string[]
}

/** The counts a user came for. */
export interface Counts {
  charges: number
  invoices: number
  refunds: number
  emails: number
  duplicatesRefused: { charges: number; invoices: number; emails: number; total: number }
}

/** The verdict on a run, from the ledgers (what really happened) and the log (what the session knows). */
export interface Verdict {
  ok: boolean
  orders: OrderSummary[]
  counts: Counts
  /** Why `ok` is false, one line each. */
  problems: string[]
}

/** The ledger entries of one session: every idempotency key begins with the session id (`${logId}:…`). */
export function entriesOfSession(ledger: readonly LedgerEntry[], sessionId: string): LedgerEntry[] {
  return ledger.filter((e) => e.key.startsWith(`${sessionId}:`))
}

/**
 * Judges a run: exactly one charge and one invoice per order (with `failInvoice`: one
 * charge, refunded once, and no invoice), no more emails than orders, and a session whose
 * turn finished.
 */
export function judge(
  orderIds: readonly string[],
  ledger: readonly LedgerEntry[],
  entries: readonly LogEntry[],
  { failInvoice = false }: { failInvoice?: boolean } = {},
): Verdict {
  const done = (op: string) => ledger.filter((e) => e.op === op && e.outcome === 'done')
  const refused = (op: string) => ledger.filter((e) => e.op === op && e.outcome === 'refused').length
  const orders = orderIds.map((orderId) => {
    const chargeIds = done('charge')
      .filter((e) => e.detail.orderId === orderId)
      .map((e) => e.detail.chargeId!)
    const invoices = done('invoice').filter((e) => chargeIds.includes(e.detail.chargeId!)).length
    const refunds = done('refund').filter((e) => chargeIds.includes(e.detail.chargeId!)).length
    return { orderId, charges: chargeIds.length, invoices, refunds, chargeIds }
  })
  const counts: Counts = {
    charges: done('charge').length,
    invoices: done('invoice').length,
    refunds: done('refund').length,
    emails: done('send').length,
    duplicatesRefused: { charges: refused('charge'), invoices: refused('invoice'), emails: refused('send'), total: 0 },
  }
  counts.duplicatesRefused.total = counts.duplicatesRefused.charges + counts.duplicatesRefused.invoices + counts.duplicatesRefused.emails
  const problems: string[] = []
  for (const o of orders) {
    if (o.charges !== 1) problems.push(`order ${o.orderId} was charged ${o.charges} times, not once`)
    const invoices = failInvoice ? 0 : 1
    if (o.invoices !== invoices) problems.push(`order ${o.orderId} got ${o.invoices} invoices, not ${invoices}`)
    const refunds = failInvoice ? 1 : 0
    if (o.refunds !== refunds) problems.push(`order ${o.orderId} got ${o.refunds} refunds, not ${refunds}`)
  }
  if (counts.emails > orderIds.length) problems.push(`${counts.emails} emails went out for ${orderIds.length} order(s)`)
  const last = entries.at(-1)?.record.type
  if (last !== 'harness.turn.finished') problems.push(`the session's last record is ${last ?? 'missing'}, not harness.turn.finished`)
  return { ok: problems.length === 0, orders, counts, problems }
}
