import { HarnessError, isHarnessError, LogConflictError } from '../contract/errors.js'
import { readAll } from '../contract/read-all.js'
import type { HarnessStore, Lease, LogEntry, LogRecord } from '../contract/types.js'
import { jsonEqual } from '../json/check-json.js'
import { applyEntry, type SessionFold, type SessionState } from './session-fold.js'
import { isOutcomeUnknown } from './store-boundary.js'

/** A batch whose append failed in a way that leaves its outcome unknown: it may have landed at `seq`, or may still. */
interface Doubt {
  readonly seq: number
  readonly records: LogRecord[]
  readonly cause: unknown
}

/** What every scope of one session's writer shares: the queue, the state it folds into, why it stopped. */
class WriterCore {
  queue: Promise<unknown> = Promise.resolve()
  stopped: HarnessError | undefined
  doubt: Doubt | undefined

  constructor(
    readonly store: HarnessStore,
    readonly sessionId: string,
    readonly state: SessionFold,
    readonly lease: () => Lease | undefined,
    readonly onStop: (error: HarnessError) => void,
  ) {}

  stop(error: HarnessError): void {
    if (this.stopped) return
    this.stopped = error
    this.onStop(error)
  }
}

/**
 * The only way the runtime writes a session log: one append at a time, each at the
 * seq the session last saw, each carrying the session's lease (a fencing store refuses
 * a superseded writer). A conflict or a lost lease means another host drives the
 * session: the writer then refuses every later append, so this host stops and the log
 * stays well-formed.
 *
 * An append whose outcome is unknown (a timeout, a lost reply) leaves the writer in
 * doubt: nothing is written, and nothing is decided from the state, until it knows.
 * It learns by reading back, and if the batch is not there, by appending the same
 * batch at the same seq again (the seq check lets at most one of the two land).
 *
 * A writer has scopes: each run of a turn writes through a scope of its own, so a
 * stopped run (cancelled, handed off, abandoned after a step that never returned)
 * can never write again, while the session goes on through another scope.
 */
export class SessionWriter {
  readonly #core: WriterCore
  #closed: HarnessError | undefined

  constructor(
    store: HarnessStore,
    sessionId: string,
    state: SessionFold,
    options: {
      /** The session's lease, passed with every append. */
      lease?: () => Lease | undefined
      /** Called once when the writer stops: a conflict, or a lost lease. */
      onStop?: (error: HarnessError) => void
    } = {},
    core?: WriterCore,
  ) {
    this.#core = core ?? new WriterCore(store, sessionId, state, options.lease ?? (() => undefined), options.onStop ?? (() => {}))
  }

  get store(): HarnessStore {
    return this.#core.store
  }
  get sessionId(): string {
    return this.#core.sessionId
  }
  get state(): SessionState {
    return this.#core.state
  }

  /** Why this session's writer stopped for good (a conflict or a lost lease), if it did. */
  get stopped(): HarnessError | undefined {
    return this.#core.stopped
  }

  /** The conflict that stopped this writer, if any. */
  get lost(): LogConflictError | undefined {
    const stopped = this.#core.stopped
    return stopped instanceof LogConflictError ? stopped : undefined
  }

  /** True while an append's outcome is unknown. */
  get inDoubt(): boolean {
    return this.#core.doubt !== undefined
  }

  /** A new scope on the same session: the same queue and state, its own `close`. */
  scope(): SessionWriter {
    return new SessionWriter(this.#core.store, this.#core.sessionId, this.#core.state, {}, this.#core)
  }

  /** Stops every scope of this session's writer: its lease is gone. */
  stop(error: HarnessError): void {
    this.#core.stop(error)
  }

  /** Refuses every later append of this scope: the run was stopped, or the session handed off or closed. */
  close(reason: string): void {
    this.#closed ??= new HarnessError(
      'LEASE_LOST',
      `Session ${JSON.stringify(this.sessionId)} ${reason}; this host writes nothing more to it.`,
    )
  }

  /** Throws when this writer may write no more: a step must not start a side effect it could never log. */
  assertWritable(): void {
    if (this.#core.stopped) throw this.#core.stopped
    if (this.#closed) throw this.#closed
  }

  /**
   * Appends the batch after every earlier append of this writer; resolves once it is stored
   * and folded. `owned`: the runtime made these records from JSON text of its own and keeps
   * no other reference, so the fold keeps them without a copy (a step's value, the hot path).
   */
  append(records: LogRecord[], options?: { owned?: boolean }): Promise<void> {
    return this.#enqueue(() => this.#appendNow(records, options?.owned === true))
  }

  /**
   * Settles an unknown outcome, if there is one: afterwards the state is what the log
   * holds. Resolves false when the store still cannot tell (keep every wakeup then);
   * throws when another writer got there (the writer stops).
   */
  settle(): Promise<boolean> {
    return this.#enqueue(async () => {
      if (this.#core.stopped) throw this.#core.stopped
      return this.#settleDoubt()
    })
  }

  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const core = this.#core
    const queued = core.queue.then(work)
    core.queue = queued.catch(() => {})
    return queued
  }

  async #appendNow(records: LogRecord[], owned: boolean): Promise<void> {
    this.assertWritable()
    if (records.length === 0) return
    if (this.#core.doubt && !(await this.#settleDoubt())) throw stillInDoubt(this.sessionId, this.#core.doubt?.cause)
    this.assertWritable()
    const core = this.#core
    const seq = core.state.nextSeq
    try {
      await this.#send(seq, records)
    } catch (error) {
      if (isHarnessError(error, 'LOG_CONFLICT')) {
        // Another writer, or our own batch that a retry inside the store sent twice: read back to know.
        if (!(await this.#landed(seq, records).catch(() => false))) return this.#fail(seq)
      } else if (isOutcomeUnknown(error)) {
        core.doubt = { seq, records, cause: error }
        if (!(await this.#settleDoubt())) throw stillInDoubt(this.sessionId, error)
        return
      } else {
        throw error
      }
    }
    this.#fold(seq, records, owned)
  }

  /** One append with the session's lease. A lost lease stops every scope. */
  #send(seq: number, records: LogRecord[]): Promise<unknown> {
    const lease = this.#core.lease()
    const onError = (error: unknown): never => {
      if (isHarnessError(error, 'LEASE_LOST')) this.#core.stop(error)
      throw error
    }
    try {
      return this.#core.store.append(this.sessionId, seq, records, lease ? { lease } : undefined).catch(onError)
    } catch (error) {
      return Promise.reject(error).catch(onError)
    }
  }

  /** True when no outcome is unknown any more. */
  async #settleDoubt(): Promise<boolean> {
    const core = this.#core
    const doubt = core.doubt
    if (!doubt) return true
    const found = await this.#inspect(doubt.seq, doubt.records).catch(() => 'unknown' as const)
    if (found === 'unknown') return false
    if (found === 'other') return this.#fail(doubt.seq)
    if (found === 'empty') {
      // Not there (yet): take the seq with the same batch, so the first attempt can never land after we decided.
      try {
        await this.#send(doubt.seq, doubt.records)
      } catch (error) {
        if (isHarnessError(error, 'LEASE_LOST')) throw error
        if (!isHarnessError(error, 'LOG_CONFLICT')) {
          if (isOutcomeUnknown(error)) return false
          throw error
        }
        const again = await this.#inspect(doubt.seq, doubt.records).catch(() => 'unknown' as const)
        if (again === 'unknown') return false
        if (again !== 'ours') return this.#fail(doubt.seq)
      }
    }
    core.doubt = undefined
    this.#fold(doubt.seq, doubt.records)
    return true
  }

  /** Folds a stored batch; a copy of each record unless the runtime owns them (a caller could change them later). */
  #fold(seq: number, records: LogRecord[], owned = false): void {
    records.forEach((record, i) => {
      applyEntry(this.#core.state, { seq: seq + i, record: owned ? record : (JSON.parse(JSON.stringify(record)) as LogRecord) })
    })
  }

  async #landed(seq: number, records: LogRecord[]): Promise<boolean> {
    return (await this.#inspect(seq, records)) === 'ours'
  }

  /** What the log holds from `seq` on: our batch, nothing, or someone else's records. */
  async #inspect(seq: number, records: LogRecord[]): Promise<'ours' | 'empty' | 'other'> {
    // A store may answer in short pages: read until the batch's range is covered or the log ends.
    const back: LogEntry[] = []
    while (back.length < records.length) {
      const page = await this.store.read(this.sessionId, { after: seq - 1 + back.length, limit: records.length - back.length })
      if (page.length === 0) break
      back.push(...page)
    }
    if (back.length === 0) return 'empty'
    return back.length === records.length && back.every((entry, i) => jsonEqual(entry.record, records[i])) ? 'ours' : 'other'
  }

  async #fail(seq: number): Promise<never> {
    const tail = await readAll(this.store, this.sessionId, 1000, seq - 1).catch(() => [])
    const lost = new LogConflictError(this.sessionId, seq, seq + tail.length)
    this.#core.doubt = undefined
    this.#core.stop(lost)
    throw lost
  }
}

function stillInDoubt(sessionId: string, cause: unknown): HarnessError {
  return new HarnessError(
    'STORE_UNAVAILABLE',
    `The store did not confirm a write to session ${JSON.stringify(sessionId)}, and could not be read back: nobody knows yet whether it landed. This host writes nothing more until the store answers; the session's wakeup stays, so a worker finishes it. Try again later, or close the session.`,
    { cause },
  )
}
