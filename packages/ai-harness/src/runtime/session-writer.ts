import { HarnessError, isHarnessError, LogConflictError } from '../contract/errors.js'
import { readAll } from '../contract/read-all.js'
import type { HarnessStore, LogEntry, LogRecord } from '../contract/types.js'
import { jsonEqual } from '../json/check-json.js'
import { applyEntry, type SessionState } from './session-fold.js'

/**
 * The only way the runtime writes a session log: one append at a time, each at the
 * seq the session last saw. A conflict means another host wrote to the session; the
 * writer then refuses every later append, so this host stops and the log stays
 * well-formed.
 */
export class SessionWriter {
  #queue: Promise<unknown> = Promise.resolve()
  #lost: LogConflictError | undefined
  #closed: HarnessError | undefined

  constructor(
    readonly store: HarnessStore,
    readonly logId: string,
    readonly state: SessionState,
    /** Called once when another writer is detected. */
    private readonly onLost: (error: LogConflictError) => void = () => {},
  ) {}

  /** The conflict that stopped this writer, if any. */
  get lost(): LogConflictError | undefined {
    return this.#lost
  }

  /** Refuses every later append: the session was handed off or closed, another host drives it now. */
  close(reason: string): void {
    this.#closed ??= new HarnessError('LEASE_LOST', `Session ${JSON.stringify(this.logId)} ${reason}; this host writes nothing more to it.`)
  }

  /** Throws when this writer may write no more: a step must not start a side effect it could never log. */
  assertWritable(): void {
    if (this.#lost) throw this.#lost
    if (this.#closed) throw this.#closed
  }

  /** Appends the batch after every earlier append of this writer; resolves once it is stored and folded. */
  append(records: LogRecord[]): Promise<void> {
    const run = this.#queue.then(() => this.#appendNow(records))
    this.#queue = run.catch(() => {})
    return run
  }

  async #appendNow(records: LogRecord[]): Promise<void> {
    if (this.#lost) throw this.#lost
    if (this.#closed) throw this.#closed
    if (records.length === 0) return
    const expectedSeq = this.state.nextSeq
    try {
      await this.store.append(this.logId, expectedSeq, records)
    } catch (error) {
      if (isHarnessError(error) && error.code !== 'LOG_CONFLICT') throw error
      // A conflict, or an ambiguous failure (timeout, lost connection): read back to
      // learn whether our batch is the one that landed.
      let landed: boolean
      try {
        landed = await this.#landed(expectedSeq, records)
      } catch {
        throw isHarnessError(error) ? error : storeUnavailable(error)
      }
      if (!landed) {
        if (!isHarnessError(error)) {
          // Nothing landed at all: the failure happened before the write. Safe to try once more.
          const tail = await this.store.read(this.logId, { after: expectedSeq - 1, limit: 1 })
          if (tail.length === 0) return this.#retryOnce(expectedSeq, records, error)
        }
        return this.#fail(expectedSeq)
      }
    }
    this.#fold(expectedSeq, records)
  }

  async #retryOnce(expectedSeq: number, records: LogRecord[], first: unknown): Promise<void> {
    try {
      await this.store.append(this.logId, expectedSeq, records)
    } catch (error) {
      if (await this.#landed(expectedSeq, records).catch(() => false)) return this.#fold(expectedSeq, records)
      if (isHarnessError(error, 'LOG_CONFLICT')) return this.#fail(expectedSeq)
      throw storeUnavailable(error ?? first)
    }
    this.#fold(expectedSeq, records)
  }

  #fold(expectedSeq: number, records: LogRecord[]): void {
    records.forEach((record, i) => {
      applyEntry(this.state, { seq: expectedSeq + i, record: JSON.parse(JSON.stringify(record)) as LogRecord })
    })
  }

  async #landed(expectedSeq: number, records: LogRecord[]): Promise<boolean> {
    // A store may answer in short pages: read until the batch's range is covered or the log ends.
    const back: LogEntry[] = []
    while (back.length < records.length) {
      const page = await this.store.read(this.logId, { after: expectedSeq - 1 + back.length, limit: records.length - back.length })
      if (page.length === 0) break
      back.push(...page)
    }
    return back.length === records.length && back.every((entry, i) => jsonEqual(entry.record, records[i]))
  }

  async #fail(expectedSeq: number): Promise<never> {
    const tail = await readAll(this.store, this.logId, 1000, expectedSeq - 1).catch(() => [])
    const lost = new LogConflictError(this.logId, expectedSeq, expectedSeq + tail.length)
    this.#lost = lost
    this.onLost(lost)
    throw lost
  }
}

function storeUnavailable(cause: unknown): HarnessError {
  return new HarnessError(
    'STORE_UNAVAILABLE',
    'The store did not confirm the write and could not be read back. Nothing more is written by this host; open the session again when the store is reachable.',
    { cause },
  )
}
