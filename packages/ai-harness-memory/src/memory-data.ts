/**
 * The data behind one or more memory store instances. Share one between instances to
 * model several processes on one database (the conformance suite's race cases do).
 * Records are kept as JSON text, as a database would keep them, so a reader never
 * holds a reference to a writer's object.
 */
export interface MemoryData {
  readonly logs: Map<string, string[]>
  /** The lease of each session while it is held; `release` and `delete` remove it. */
  readonly leases: Map<string, { owner: string; fence: number; expiresAt: number; instance?: number }>
  readonly wakeups: Map<string, number>
  /**
   * The last fence handed out, to any session. One counter for the whole data set, so a
   * session's fences never repeat, also after `delete` removed its lease (a per-session
   * counter would have to keep the deleted id around).
   */
  readonly fences: { last: number }
  /**
   * The store instances (holders) that were closed: a lease whose holder is here is an
   * orphan, taken at once by the next `acquire`. Absent in a data set made by hand: then
   * leases end only by expiry or release.
   */
  readonly closed?: Set<number>
}

export function createMemoryData(): MemoryData {
  return { logs: new Map(), leases: new Map(), wakeups: new Map(), fences: { last: 0 }, closed: new Set() }
}

/** Every stored byte of a memory data set, for the conformance suite's no-trace checks. */
export function dumpMemoryData(data: MemoryData): string {
  return JSON.stringify({
    logs: [...data.logs],
    leases: [...data.leases],
    wakeups: [...data.wakeups],
  })
}
