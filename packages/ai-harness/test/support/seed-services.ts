/** Fakes for the services the seed page declares with `declare const`. */

export interface SeedTools {
  checkout: import('@tanstack/ai').AnyTool
  notify: import('@tanstack/ai').AnyTool
  remember: import('@tanstack/ai').AnyTool
}

/** A payment service. Counts every call, so a test can tell "ran again" from "charged again". */
export class FakeBilling {
  readonly charges: Array<{ id: string; orderId: string }> = []
  readonly invoices: string[] = []
  /** Called before each invoice is sent, e.g. to look at the log at that moment. */
  beforeInvoice: (chargeId: string) => void | Promise<void> = () => {}

  async charge(orderId: string): Promise<{ id: string }> {
    const charge = { id: `ch_${this.charges.length + 1}`, orderId }
    this.charges.push(charge)
    return { id: charge.id }
  }

  async sendInvoice(chargeId: string): Promise<void> {
    await this.beforeInvoice(chargeId)
    this.invoices.push(chargeId)
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

/** Puts fresh fakes where the seed's `declare const billing` and `mailer` look: on globalThis. */
export function installSeedServices(): { billing: FakeBilling; mailer: FakeMailer } {
  const billing = new FakeBilling()
  const mailer = new FakeMailer()
  Object.assign(globalThis, { billing, mailer })
  return { billing, mailer }
}
