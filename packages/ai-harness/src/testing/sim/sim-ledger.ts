import type { Lease, LogRecord } from '../../contract/types.js'

/** One call of a step's fn, as the simulated world saw it. */
export interface Invocation {
  /** The idempotency key, with the incarnation of its log (a deleted log's keys start anew). */
  readonly key: string
  readonly attempt: number
  /** The step's budget of attempts. */
  readonly budget: number
  /** The process (host name and restart count) it ran in. */
  readonly process: string
  readonly start: number
  end: number | undefined
  outcome: 'running' | 'ok' | 'failed' | 'cut'
}

/** An append that landed in the store, when it landed. */
export interface LandedAppend {
  readonly logId: string
  readonly incarnation: number
  readonly seq: number
  readonly records: readonly LogRecord[]
  readonly at: number
}

/**
 * What happened in a world, in virtual time: every append that landed, every delete,
 * and every invocation of a step's fn. The invariants are checked against it.
 */
export class SimLedger {
  readonly appends: LandedAppend[] = []
  readonly invocations: Invocation[] = []
  /** Deletes that resolved, by log id: the time of the last one. */
  readonly deletedAt = new Map<string, number>()
  readonly #incarnations = new Map<string, number>()
  /** The records of each log's current incarnation, in seq order. */
  readonly #logs = new Map<string, LogRecord[]>()
  /** Notes of things a client saw that break a rule (a refusal that is no HarnessError, say). */
  readonly notes: string[] = []
  /** What happened that is no violation but helps read a failing world (failed resumes, refusals), with times. */
  readonly trace: string[] = []

  constructor(private readonly now: () => number) {}

  note(what: string): void {
    if (this.trace.length < 500) this.trace.push(`${this.now()}: ${what}`)
  }

  incarnation(logId: string): number {
    return this.#incarnations.get(logId) ?? 0
  }

  landed(logId: string, seq: number, records: readonly LogRecord[]): void {
    this.appends.push({ logId, incarnation: this.incarnation(logId), seq, records, at: this.now() })
    const log = this.#logs.get(logId) ?? []
    log.push(...records)
    this.#logs.set(logId, log)
  }

  deleted(logId: string): void {
    this.#incarnations.set(logId, this.incarnation(logId) + 1)
    this.#logs.delete(logId)
    this.deletedAt.set(logId, this.now())
  }

  /** The records of a log's current incarnation, as they landed. */
  records(logId: string): readonly LogRecord[] {
    return this.#logs.get(logId) ?? []
  }

  /** True when the log has a turn and its last turn ended (finished or cancelled). */
  settled(logId: string): boolean {
    let open: boolean | undefined
    for (const record of this.records(logId)) {
      if (record.type === 'harness.turn.started') open = true
      else if (record.type === 'harness.turn.finished' || record.type === 'harness.turn.cancelled') open = false
    }
    return open === false
  }

  begin(logId: string, key: string, attempt: number, budget: number, process: string): Invocation {
    const invocation: Invocation = {
      key: `${this.incarnation(logId)}/${key}`,
      attempt,
      budget,
      process,
      start: this.now(),
      end: undefined,
      outcome: 'running',
    }
    this.invocations.push(invocation)
    this.note(`${process} starts ${key} attempt ${attempt}`)
    return invocation
  }

  end(invocation: Invocation, outcome: Invocation['outcome']): void {
    if (invocation.outcome !== 'running') return
    invocation.outcome = outcome
    invocation.end = this.now()
    this.note(`${invocation.process} ends ${invocation.key} attempt ${invocation.attempt}: ${outcome}`)
  }

  /** The newest fence each host object (a lease owner) has sent an append under, by log. */
  readonly #fences = new Map<string, number>()

  /**
   * An append reaches the store under `lease`. One host object drives a session with one
   * session object at a time, so once it wrote under a newer lease of a log, nothing it sends
   * may carry an older one (two of its objects drove the log at once), fenced store or not.
   */
  appendSent(logId: string, lease: Lease | undefined): void {
    if (!lease) return
    const key = `${lease.owner}\u0000${logId}`
    const newest = this.#fences.get(key)
    if (newest !== undefined && lease.fence < newest)
      this.notes.push(
        `${logId}: host ${lease.owner} sent an append under fence ${lease.fence} after one under fence ${newest} (two of its session objects drove the log)`,
      )
    if (newest === undefined || lease.fence > newest) this.#fences.set(key, lease.fence)
  }

  /** A process died: its fns in flight end now. */
  crashed(process: string): void {
    for (const invocation of this.invocations) if (invocation.process === process) this.end(invocation, 'cut')
  }
}
