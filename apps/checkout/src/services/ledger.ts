import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'

/** What a service did with one call: performed it, or refused it as a repeat of an earlier key. */
export type LedgerOutcome = 'done' | 'refused'

/** One line of a service's ledger: a call it received, with its idempotency key and outcome. */
export interface LedgerEntry {
  /** The service that received the call, e.g. `billing`. */
  service: string
  /** The operation, e.g. `charge`. */
  op: string
  /** The idempotency key the caller passed. */
  key: string
  outcome: LedgerOutcome
  /** The result the caller got: for a refusal, the original call's result. */
  result: Record<string, string> | null
  /** Operation-specific fields (order id, charge id, recipient…). */
  detail: Record<string, string>
  /** ISO time of the call. */
  at: string
  /** Process that made the call, so a reader can tell the killed process from its successor. */
  pid: number
}

/**
 * An append-only JSON-lines file, fsync'd after every line, so what a service did
 * survives a SIGKILL of the process one instruction later. This is the "database" of
 * the local billing service and mailer: they must remember every key they honoured,
 * across processes, or they could not refuse a repeat.
 */
export class Ledger {
  readonly #entries: LedgerEntry[] = []

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true })
    if (existsSync(path)) this.#entries.push(...parseLedger(readFileSync(path, 'utf8')))
  }

  /** Every entry, oldest first. */
  get entries(): readonly LedgerEntry[] {
    return this.#entries
  }

  /** The first `done` entry of an operation with this key, if the service honoured it before. */
  find(op: string, key: string): LedgerEntry | undefined {
    return this.#entries.find((e) => e.op === op && e.key === key && e.outcome === 'done')
  }

  /** Writes one entry and forces it to disk before returning. */
  append(entry: LedgerEntry): void {
    const fd = openSync(this.path, 'a')
    try {
      writeSync(fd, `${JSON.stringify(entry)}\n`)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    this.#entries.push(entry)
  }
}

/** Reads a ledger file. A torn last line (a kill in the middle of a write) is skipped: that call never returned. */
export function parseLedger(text: string): LedgerEntry[] {
  const entries: LedgerEntry[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      entries.push(JSON.parse(line) as LedgerEntry)
    } catch {
      // Only the last line can be torn; whatever it was, its caller never got an answer.
    }
  }
  return entries
}

/** Reads a ledger file without opening it for writing; empty when the file does not exist yet. */
export function readLedger(path: string): LedgerEntry[] {
  return existsSync(path) ? parseLedger(readFileSync(path, 'utf8')) : []
}
