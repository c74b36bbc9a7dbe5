import { appendFileSync, existsSync, readFileSync } from 'node:fs'

/** One line of the ledger: every call the billing service got, and what it did. */
export interface LedgerLine {
  op: 'charge' | 'invoice'
  key: string
  outcome: 'created' | 'refused'
  id: string
}

/**
 * A billing service whose ledger is a file, so it outlives a killed process. Like a
 * real payment API it refuses a second call with an idempotency key it has seen.
 */
export function fileBilling(path: string) {
  const lines = (): LedgerLine[] =>
    existsSync(path)
      ? readFileSync(path, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as LedgerLine)
      : []
  const call = (op: LedgerLine['op'], key: string, id: string): { id: string } => {
    const seen = lines().find((l) => l.op === op && l.key === key && l.outcome === 'created')
    const line: LedgerLine = { op, key, outcome: seen ? 'refused' : 'created', id: seen?.id ?? id }
    appendFileSync(path, `${JSON.stringify(line)}\n`)
    return { id: line.id }
  }
  return {
    lines,
    charge: (orderId: string, key: string) => call('charge', key, `ch_${orderId}`),
    sendInvoice: (chargeId: string, key: string) => void call('invoice', key, `in_${chargeId}`),
  }
}

export type FileBilling = ReturnType<typeof fileBilling>
