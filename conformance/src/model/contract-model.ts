/**
 * The store contract as a few maps: what a correct store answers to each call, for the
 * generated cases to compare a store with. It keeps no bytes, only what the contract
 * promises (records, the current lease's owner and acquisition, wakeup times), and reads
 * time from the case's clock, as the store does.
 */
import { compareCodePoints, compareWakeups, type LogRecord, WAITING_FOR_PERSON, type Wakeup } from '@tanstack/ai-harness/store'

export class ContractModel {
  readonly logs = new Map<string, LogRecord[]>()
  /** The current lease of each session: its owner and the acquisition it came from. */
  readonly leases = new Map<string, { owner: string; acquisition: number }>()
  readonly wakeups = new Map<string, number>()
  #acquisitions = 0

  constructor(private readonly now: () => number) {}

  nextSeq(logId: string): number {
    return (this.logs.get(logId)?.length ?? 0) + 1
  }
  append(logId: string, records: readonly LogRecord[]): void {
    const log = this.logs.get(logId) ?? []
    log.push(...structuredClone(records))
    this.logs.set(logId, log)
  }
  read(logId: string): LogRecord[] {
    return this.logs.get(logId) ?? []
  }
  delete(logId: string): void {
    this.logs.delete(logId)
    this.leases.delete(logId)
    this.wakeups.delete(logId)
  }
  /** The acquisition number, or `'LEASE_HELD'` when another owner holds the session (leases never expire here). */
  acquire(logId: string, owner: string): number | 'LEASE_HELD' {
    const current = this.leases.get(logId)
    if (current && current.owner !== owner) return 'LEASE_HELD'
    const acquisition = ++this.#acquisitions
    this.leases.set(logId, { owner, acquisition })
    return acquisition
  }
  /** Whether the lease of `acquisition` is still the session's current one. */
  holds(logId: string, acquisition: number): boolean {
    return this.leases.get(logId)?.acquisition === acquisition
  }
  release(logId: string): void {
    this.leases.delete(logId)
  }
  schedule(logId: string, at: number): void {
    this.wakeups.set(logId, at)
  }
  cancel(logId: string): void {
    this.wakeups.delete(logId)
  }
  due(limit: number): Wakeup[] {
    const now = this.now()
    return [...this.wakeups]
      .filter(([, at]) => at <= now)
      .map(([logId, at]) => ({ logId, at }))
      .sort(compareWakeups)
      .slice(0, limit)
  }
  claim(limit: number, holdMs: number): Wakeup[] {
    const taken = this.due(limit)
    for (const wakeup of taken) this.wakeups.set(wakeup.logId, this.now() + holdMs)
    return taken
  }
  list(): string[] {
    return [...this.logs]
      .filter(([, log]) => log.length > 0)
      .map(([id]) => id)
      .sort(compareCodePoints)
  }
  waiting(): string[] {
    return [...this.wakeups]
      .filter(([, at]) => at === WAITING_FOR_PERSON)
      .map(([id]) => id)
      .sort(compareCodePoints)
  }
}
