/**
 * Fakes for the services the docs pages declare with `declare const`: the tests put
 * them on globalThis, where those declarations look, before a page's module runs.
 */

/** A payment service that, like a real one, refuses a second call with a key it has seen. */
export class FakeBilling {
  /** Every call, including refused repeats. */
  readonly calls: Array<{ op: 'charge' | 'invoice'; key: string; subject: string }> = []
  readonly charges: Array<{ id: string; orderId: string; key: string }> = []
  readonly invoices: Array<{ chargeId: string; key: string }> = []

  async charge(orderId: string, idempotencyKey: string): Promise<{ id: string }> {
    this.calls.push({ op: 'charge', key: idempotencyKey, subject: orderId })
    const seen = this.charges.find((c) => c.key === idempotencyKey)
    if (seen) return { id: seen.id }
    const charge = { id: `ch_${this.charges.length + 1}`, orderId, key: idempotencyKey }
    this.charges.push(charge)
    return { id: charge.id }
  }

  async sendInvoice(chargeId: string, idempotencyKey: string): Promise<void> {
    this.calls.push({ op: 'invoice', key: idempotencyKey, subject: chargeId })
    if (!this.invoices.some((i) => i.key === idempotencyKey)) this.invoices.push({ chargeId, key: idempotencyKey })
  }

  async refund(chargeId: string, idempotencyKey: string): Promise<{ id: string }> {
    this.calls.push({ op: 'charge', key: idempotencyKey, subject: `refund:${chargeId}` })
    return { id: `re_${chargeId}` }
  }
}

export class FakeMailer {
  readonly sent: Array<{ id: string; to: string; body: string }> = []

  async send(to: string, body: string): Promise<{ id: string }> {
    const mail = { id: `mail_${this.sent.length + 1}`, to, body }
    this.sent.push(mail)
    return { id: mail.id }
  }
}

export interface Services {
  billing: FakeBilling
  mailer: FakeMailer
}

/** Puts fresh fakes on globalThis and returns them. */
export function installServices(): Services {
  const services = { billing: new FakeBilling(), mailer: new FakeMailer() }
  Object.assign(globalThis, services)
  return services
}
