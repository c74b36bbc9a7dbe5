import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Ledger, type LedgerEntry } from './ledger.js'

/** What billing calls take besides their arguments, as a real payment API takes a header. */
export interface IdempotencyOptions {
  idempotencyKey: string
}

/** Called after billing has done (and stored) a charge, before the charge call returns. */
export type AfterChargeHook = (entry: LedgerEntry) => Promise<void>

export interface BillingOptions {
  /** Folder of the ledger file `billing.jsonl`. */
  dataDir: string
  /** Progress lines, e.g. to stderr. */
  log?: (line: string) => void
  /** Lets the crash demo stop the process between the charge and its step record. */
  afterCharge?: AfterChargeHook
  /** `--fail-invoice`: the invoice service refuses every invoice, so the checkout rolls its charge back. */
  failInvoice?: boolean
}

/** The invoice service said no (`--fail-invoice`): no attempt can change that. */
export class InvoiceRefusedError extends Error {
  override readonly name = 'InvoiceRefusedError'
}

/** The ledger file of the billing service in a data folder. */
export const billingLedgerPath = (dataDir: string) => join(dataDir, 'billing.jsonl')

/**
 * A local billing service that behaves like a payment API: it records every call,
 * and a call with an idempotency key it has honoured before is refused: it returns
 * the original result and does nothing. The refusal is recorded too, so the summary
 * can count it.
 */
export class BillingService {
  readonly #ledger: Ledger
  readonly #log: (line: string) => void
  readonly #afterCharge: AfterChargeHook | undefined
  readonly #failInvoice: boolean

  constructor(options: BillingOptions) {
    this.#ledger = new Ledger(billingLedgerPath(options.dataDir))
    this.#log = options.log ?? (() => {})
    this.#afterCharge = options.afterCharge
    this.#failInvoice = options.failInvoice === true
  }

  /** Refunds a charge once per idempotency key (the compensation of a charge). */
  async refund(chargeId: string, { idempotencyKey }: IdempotencyOptions): Promise<void> {
    if (this.#ledger.find('refund', idempotencyKey)) {
      this.#refuse('refund', idempotencyKey, { chargeId }, null)
      this.#log(`billing: refused a second refund of ${chargeId} (same idempotency key)`)
      return
    }
    this.#record('refund', idempotencyKey, 'done', { chargeId }, null)
    this.#log(`billing: refunded ${chargeId}`)
  }

  /** Charges an order once per idempotency key; returns the charge. */
  async charge(orderId: string, { idempotencyKey }: IdempotencyOptions): Promise<{ id: string }> {
    const earlier = this.#ledger.find('charge', idempotencyKey)
    if (earlier) {
      const id = earlier.detail.chargeId!
      this.#refuse('charge', idempotencyKey, { orderId, chargeId: id }, { id })
      this.#log(`billing: refused a second charge of order ${orderId} (same idempotency key), returned ${id}`)
      return { id }
    }
    const id = `ch_${randomBytes(6).toString('hex')}`
    const entry = this.#record('charge', idempotencyKey, 'done', { orderId, chargeId: id }, { id })
    this.#log(`billing: charged order ${orderId} -> ${id}`)
    await this.#afterCharge?.(entry)
    return { id }
  }

  /** Sends the invoice of a charge once per idempotency key. */
  async sendInvoice(chargeId: string, { idempotencyKey }: IdempotencyOptions): Promise<void> {
    const charged = this.#ledger.entries.some((e) => e.op === 'charge' && e.outcome === 'done' && e.detail.chargeId === chargeId)
    // A real API rejects an invoice for a charge it never made; so does this one.
    if (!charged) throw new Error(`billing: no charge ${chargeId}; invoice refused`)
    if (this.#failInvoice) {
      this.#log(`billing: the invoice service refused the invoice for ${chargeId}`)
      throw new InvoiceRefusedError(`The invoice service refused the invoice for ${chargeId}`)
    }
    const earlier = this.#ledger.find('invoice', idempotencyKey)
    if (earlier) {
      this.#refuse('invoice', idempotencyKey, { chargeId, invoiceId: earlier.detail.invoiceId! }, null)
      this.#log(`billing: refused a second invoice for ${chargeId} (same idempotency key)`)
      return
    }
    const invoiceId = `in_${randomBytes(6).toString('hex')}`
    this.#record('invoice', idempotencyKey, 'done', { chargeId, invoiceId }, null)
    this.#log(`billing: sent invoice ${invoiceId} for ${chargeId}`)
  }

  #refuse(op: string, key: string, detail: Record<string, string>, result: Record<string, string> | null): void {
    this.#record(op, key, 'refused', detail, result)
  }

  #record(
    op: string,
    key: string,
    outcome: LedgerEntry['outcome'],
    detail: Record<string, string>,
    result: Record<string, string> | null,
  ): LedgerEntry {
    const entry: LedgerEntry = { service: 'billing', op, key, outcome, result, detail, at: new Date().toISOString(), pid: process.pid }
    this.#ledger.append(entry)
    return entry
  }
}
