import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { IdempotencyOptions } from './billing.js'
import { Ledger } from './ledger.js'

export interface MailerOptions {
  /** Folder of the ledger file `mailer.jsonl`. */
  dataDir: string
  /** Progress lines, e.g. to stderr. */
  log?: (line: string) => void
}

/** The ledger file of the mailer in a data folder. */
export const mailerLedgerPath = (dataDir: string) => join(dataDir, 'mailer.jsonl')

/**
 * A local mailer that records every email it sends and, like a transactional email
 * API, refuses a repeated idempotency key by returning the original message id.
 */
export class Mailer {
  readonly #ledger: Ledger
  readonly #log: (line: string) => void

  constructor(options: MailerOptions) {
    this.#ledger = new Ledger(mailerLedgerPath(options.dataDir))
    this.#log = options.log ?? (() => {})
  }

  /** Sends one email per idempotency key; returns its message id. */
  async send(to: string, body: string, { idempotencyKey }: IdempotencyOptions): Promise<{ id: string }> {
    const earlier = this.#ledger.find('send', idempotencyKey)
    const base = { service: 'mailer', op: 'send', key: idempotencyKey, at: new Date().toISOString(), pid: process.pid }
    if (earlier) {
      const id = earlier.detail.mailId!
      this.#ledger.append({ ...base, outcome: 'refused', result: { id }, detail: { to, mailId: id } })
      this.#log(`mailer: refused a second email to ${to} (same idempotency key), returned ${id}`)
      return { id }
    }
    const id = `msg_${randomBytes(6).toString('hex')}`
    this.#ledger.append({ ...base, outcome: 'done', result: { id }, detail: { to, mailId: id, body } })
    this.#log(`mailer: sent ${id} to ${to}`)
    return { id }
  }
}
