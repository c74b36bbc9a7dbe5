import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Ledger, type LedgerEntry } from './ledger.js'

export interface MailerOptions {
  /** Folder of the ledger file `mailer.jsonl` (the mailer's outbox). */
  dataDir: string
  /** Progress lines, e.g. to stderr. */
  log?: (line: string) => void
  /** Lets the crash demo stop the process after the email went out, before its step record. */
  afterSend?: (entry: LedgerEntry) => Promise<void>
}

/** The ledger file of the mailer in a data folder. */
export const mailerLedgerPath = (dataDir: string) => join(dataDir, 'mailer.jsonl')

/**
 * A local mailer that behaves like an SMTP relay: it takes **no idempotency key**, so
 * every call sends an email. It keeps what it sent in its outbox, with the `ref` header
 * the sender gave, so a sender can look a message up afterwards (`outbox`).
 */
export class Mailer {
  readonly #ledger: Ledger
  readonly #log: (line: string) => void
  readonly #afterSend: MailerOptions['afterSend']

  constructor(options: MailerOptions) {
    this.#ledger = new Ledger(mailerLedgerPath(options.dataDir))
    this.#log = options.log ?? (() => {})
    this.#afterSend = options.afterSend
  }

  /** Sends one email, always (a second call with the same `ref` sends a second email); returns its message id. */
  async send(to: string, body: string, { ref }: { ref: string }): Promise<{ id: string }> {
    const id = `msg_${randomBytes(6).toString('hex')}`
    const entry: LedgerEntry = {
      service: 'mailer',
      op: 'send',
      key: ref,
      outcome: 'done',
      result: { id },
      detail: { to, mailId: id, body },
      at: new Date().toISOString(),
      pid: process.pid,
    }
    this.#ledger.append(entry)
    this.#log(`mailer: sent ${id} to ${to}`)
    await this.#afterSend?.(entry)
    return { id }
  }

  /** The message sent with this `ref` header, if the outbox has one. */
  outbox(ref: string): { id: string } | undefined {
    const sent = this.#ledger.find('send', ref)
    return sent ? { id: sent.detail.mailId! } : undefined
  }
}
