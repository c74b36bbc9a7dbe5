import {
  type AppendOptions,
  type AppendResult,
  assertLogId,
  type Clock,
  DEFAULT_MAX_LOG_ID_BYTES,
  HarnessError,
  type HarnessStore,
  LeaseHeldError,
  LeaseLostError,
  type LeaseStore,
  type LogEntry,
  LogConflictError,
  type LogRecord,
  prepareAppend,
  type ReadOptions,
  type StoreLimits,
  systemClock,
  type Wakeup,
  type WakeupStore,
} from '@tanstack/ai-harness/store'

/**
 * The data behind one or more memory store instances. Share one between instances to
 * model several processes on one database (the conformance suite's race cases do).
 * Records are kept as JSON text, as a database would keep them, so a reader never
 * holds a reference to a writer's object.
 */
export interface MemoryData {
  readonly logs: Map<string, string[]>
  readonly leases: Map<string, { owner: string; fence: number; expiresAt: number; held: boolean }>
  readonly wakeups: Map<string, number>
  /**
   * The last fence handed out, for every session of the data set: fences only grow, so a
   * lease taken after `delete` (which forgets the session's lease) still has a greater
   * fence than every lease before it.
   */
  readonly fences: { last: number }
}

export function createMemoryData(): MemoryData {
  return { logs: new Map(), leases: new Map(), wakeups: new Map(), fences: { last: 0 } }
}

export interface MemoryStoreOptions {
  /** Share data between instances; default: a new, private data set. */
  data?: MemoryData
  clock?: Clock
  limits?: Partial<StoreLimits>
}

/** Defaults chosen to match the PostgreSQL store, so an app moving between them meets the same limits. */
export const MEMORY_DEFAULT_LIMITS: StoreLimits = {
  maxRecordBytes: 256 * 1024,
  maxBatchBytes: 1024 * 1024,
  maxLogIdBytes: DEFAULT_MAX_LOG_ID_BYTES,
}

/** Yields to the event loop so concurrent callers interleave as they would against a server. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * An in-process store: the reference implementation of the store contract, fenced
 * appends included. Each operation reads and writes in one synchronous step after an
 * event-loop turn, so concurrent async writers see compare-and-set conflicts, never half
 * a batch. Its data lives in this process: other processes cannot share it.
 */
export function memoryStore(options: MemoryStoreOptions = {}): HarnessStore & {
  readonly leases: LeaseStore
  readonly wakeups: WakeupStore
  readonly data: MemoryData
} {
  const data = options.data ?? createMemoryData()
  const clock = options.clock ?? systemClock
  const limits: StoreLimits = { ...MEMORY_DEFAULT_LIMITS, ...options.limits }

  const leases: LeaseStore = {
    async acquire(logId, owner, ttlMs) {
      assertLogId(logId, limits)
      await tick()
      const now = clock.now()
      const current = data.leases.get(logId)
      if (current?.held && current.expiresAt > now && current.owner !== owner) {
        throw new LeaseHeldError(logId, current.expiresAt)
      }
      const next = { owner, fence: ++data.fences.last, expiresAt: now + ttlMs, held: true }
      data.leases.set(logId, next)
      return { logId, owner, fence: next.fence, expiresAt: next.expiresAt }
    },
    async renew(lease, ttlMs) {
      await tick()
      const now = clock.now()
      const current = data.leases.get(lease.logId)
      if (!current?.held || current.fence !== lease.fence || current.owner !== lease.owner || current.expiresAt <= now) {
        throw new LeaseLostError(lease.logId)
      }
      current.expiresAt = now + ttlMs
      return { ...lease, expiresAt: current.expiresAt }
    },
    async release(lease) {
      await tick()
      const current = data.leases.get(lease.logId)
      if (!current?.held || current.fence !== lease.fence || current.owner !== lease.owner) {
        throw new LeaseLostError(lease.logId, 'is no longer held by this owner, so it was not released')
      }
      // Keep the fence so the next lease of this session still gets a greater one.
      current.held = false
    },
  }

  const wakeups: WakeupStore = {
    async schedule(logId, at) {
      assertLogId(logId, limits)
      if (!Number.isFinite(at)) throw new HarnessError('INVALID_ARGUMENT', 'A wakeup time must be a finite number of ms since the epoch.')
      await tick()
      data.wakeups.set(logId, at)
    },
    async cancel(logId) {
      assertLogId(logId, limits)
      await tick()
      data.wakeups.delete(logId)
    },
    async due(limit) {
      await tick()
      return dueNow(data, clock.now(), limit)
    },
    async claim(limit, holdMs) {
      await tick()
      const now = clock.now()
      const taken = dueNow(data, now, limit)
      for (const wakeup of taken) data.wakeups.set(wakeup.logId, now + holdMs)
      return taken
    },
  }

  return {
    limits,
    data,
    leases,
    wakeups,
    async append(logId: string, expectedSeq: number, records: readonly LogRecord[], appendOptions?: AppendOptions): Promise<AppendResult> {
      const batch = prepareAppend(logId, expectedSeq, records, limits, appendOptions)
      if (batch.json.length === 0) return { nextSeq: expectedSeq }
      await tick()
      // The fence and the seq are checked in the same synchronous step as the write.
      const lease = appendOptions?.lease
      if (lease) {
        const current = data.leases.get(logId)
        if (!current?.held || current.owner !== lease.owner || current.fence !== lease.fence) {
          throw new LeaseLostError(
            logId,
            'is not the current lease of the session (it was taken over, released, or the session was deleted), so the append was refused',
          )
        }
      }
      const log = data.logs.get(logId) ?? []
      const nextSeq = log.length + 1
      if (nextSeq !== expectedSeq) throw new LogConflictError(logId, expectedSeq, nextSeq)
      log.push(...batch.json)
      data.logs.set(logId, log)
      return { nextSeq: nextSeq + batch.json.length }
    },
    async read(logId: string, readOptions: ReadOptions = {}): Promise<LogEntry[]> {
      assertLogId(logId, limits)
      await tick()
      const log = data.logs.get(logId) ?? []
      const after = Math.max(0, readOptions.after ?? 0)
      const end = readOptions.limit === undefined ? log.length : Math.min(log.length, after + readOptions.limit)
      const entries: LogEntry[] = []
      for (let i = after; i < end; i++) entries.push({ seq: i + 1, record: JSON.parse(log[i]!) as LogRecord })
      return entries
    },
    async delete(logId: string): Promise<void> {
      assertLogId(logId, limits)
      await tick()
      data.logs.delete(logId)
      data.leases.delete(logId)
      data.wakeups.delete(logId)
    },
  }
}

function dueNow(data: MemoryData, now: number, limit: number): Wakeup[] {
  const due: Wakeup[] = []
  for (const [logId, at] of data.wakeups) if (at <= now) due.push({ logId, at })
  due.sort((a, b) => a.at - b.at || (a.logId < b.logId ? -1 : a.logId > b.logId ? 1 : 0))
  return due.slice(0, Math.max(0, limit))
}

/** Every stored byte of a memory data set, for the conformance suite's no-trace checks. */
export function dumpMemoryData(data: MemoryData): string {
  return JSON.stringify({
    logs: [...data.logs],
    leases: [...data.leases],
    wakeups: [...data.wakeups],
    fences: data.fences,
  })
}
