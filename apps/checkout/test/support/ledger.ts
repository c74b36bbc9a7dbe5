import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** One ledger line, as the services write it. */
export interface LedgerLine {
  service: string
  op: string
  key: string
  outcome: 'done' | 'refused'
  detail: Record<string, string>
  pid: number
}

/** Reads the billing and mailer ledgers of a data folder straight from disk: what really happened. */
export function readLedgers(dataDir: string): LedgerLine[] {
  const lines: LedgerLine[] = []
  for (const file of ['billing.jsonl', 'mailer.jsonl']) {
    let text = ''
    try {
      text = readFileSync(join(dataDir, file), 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as LedgerLine)
  }
  return lines
}

export const count = (lines: LedgerLine[], op: string, outcome: 'done' | 'refused' = 'done') =>
  lines.filter((l) => l.op === op && l.outcome === outcome).length

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
