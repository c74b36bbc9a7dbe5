import type { JsonObject } from '@tanstack/ai-harness/log'
import type { LogRecord } from '@tanstack/ai-harness/store'

/** The small step value every measurement writes: what a payment step would keep. */
export const SMALL_VALUE: JsonObject = { chargeId: 'ch_3PqK8s2eZvKYlo2C1a2b3c4d', amount: 4200, currency: 'eur' }

/** The app records a tool appends with its result (the commit measured in section 1). */
export const APP_RECORDS: LogRecord[] = [
  { type: 'app.ledger', entry: 1, chargeId: 'ch_3PqK8s2eZvKYlo2C1a2b3c4d', amount: 4200 },
  { type: 'app.ledger', entry: 2, invoiceId: 'in_1NrA2b3C4d5E6f7G', amount: 4200 },
  { type: 'app.memory', fact: 'The customer prefers invoices by email.' },
]

/** A tool call id as a provider would make it (`call_` and 20 characters). */
export const SAMPLE_CALL_ID = 'call_abcdefghij0123456789'

/** The exact bytes `step.do` stores for `SMALL_VALUE`: the baseline writes the same. */
export function stepRecordBytes(name: string, toolCallId = SAMPLE_CALL_ID): string {
  return JSON.stringify({ type: 'harness.step', toolCallId, name, value: SMALL_VALUE })
}
