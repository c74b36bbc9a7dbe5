import {
  type AppendOptions,
  type AppendResult,
  assertExpectedSeq,
  assertLogId,
  checkCount,
  checkDuration,
  checkLease,
  checkLeaseTtl,
  checkListSessionsOptions,
  checkOwner,
  checkTime,
  type Clock,
  compareCodePoints,
  compareWakeups,
  HarnessError,
  type HarnessStore,
  LeaseHeldError,
  LeaseLostError,
  type LeaseStore,
  LogConflictError,
  type LogEntry,
  type LogRecord,
  prepareBatch,
  type ReadOptions,
  type SessionListStore,
  type StoreLimits,
  systemClock,
  timeAfter,
  WAITING_FOR_PERSON,
  type Wakeup,
  type WakeupStore,
} from '@tanstack/ai-harness/store'
import { createMemoryData, type MemoryData } from './memory-data.js'
import { checkOptions, MEMORY_DEFAULT_LIMITS, type MemoryStoreOptions } from './options.js'

// setImmediate where the runtime has it (Node, Bun, Deno); workerd has none, and a zero timeout yields there too.
const nextTurn: (resolve: () => void) => unknown = typeof setImmediate === 'function' ? setImmediate : (resolve) => setTimeout(resolve, 0)
/** Yields to the event loop so concurrent callers interleave as they would against a server. */
const tick = () => new Promise<void>((resolve) => nextTurn(resolve))

/**
 * An in-process store: the reference implementation of the store contract.
 * Each operation reads and writes in one synchronous step after an event-loop turn,
 * so concurrent async writers see compare-and-set conflicts, never half a batch, and a
 * fenced append checks its lease and its seq in that same step.
 * Throws `INVALID_ARGUMENT` naming the option when an option is not what it takes.
 */
export function memoryStore(options: MemoryStoreOptions = {}): HarnessStore & {
  readonly leases: LeaseStore
  readonly wakeups: WakeupStore
  readonly sessions: SessionListStore
  readonly data: MemoryData
  now(): Promise<number>
  close(): Promise<void>
} {
  checkOptions(options)
  const data = options.data ?? createMemoryData()
  const clock: Clock = options.clock ?? systemClock
  const limits: StoreLimits = {
    ...MEMORY_DEFAULT_LIMITS,
    ...Object.fromEntries(Object.entries(options.limits ?? {}).filter(([, value]) => value !== undefined)),
  }
  const now = checkedNow(clock)

  const holder = ++lastHolder
  const leases = memoryLeases(data, limits, now, holder)
  const wakeups = memoryWakeups(data, limits, now)

  const sessions = memorySessions(data)

  return {
    limits,
    data,
    leases,
    wakeups,
    sessions,
    async append(logId: string, expectedSeq: number, records: readonly LogRecord[], appendOptions?: AppendOptions): Promise<AppendResult> {
      assertLogId(logId, limits)
      assertExpectedSeq(expectedSeq)
      const lease = appendOptions?.lease === undefined ? undefined : checkLease(appendOptions.lease, limits, 'append lease')
      const batch = prepareBatch(records, limits)
      if (batch.json.length === 0) return { nextSeq: expectedSeq }
      await tick()
      if (lease) {
        // Expiry is not checked: an expired lease nobody took over still writes safely behind the seq check.
        const current = data.leases.get(logId)
        if (!current || current.owner !== lease.owner || current.fence !== lease.fence) {
          throw new LeaseLostError(
            logId,
            'is no longer the current lease (a newer lease, a release or a delete came after it), so the append wrote nothing',
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
    read: (logId: string, readOptions: ReadOptions = {}) => readLog(data, limits, logId, readOptions),
    async delete(logId: string): Promise<void> {
      assertLogId(logId, limits)
      await tick()
      // One synchronous step: any later append at a seq > 1 finds an empty log and conflicts;
      // a fenced one finds no lease; the next lease's fence comes from the global counter.
      data.logs.delete(logId)
      data.leases.delete(logId)
      data.wakeups.delete(logId)
    },
    async now() {
      return now()
    },
    /** Ends this instance as a holder, as a crash would: its leases stay, as orphans that the next `acquire` takes at once. */
    async close() {
      data.closed?.add(holder)
    },
  }
}

/** A page of one log, by the paging rule of `ReadOptions`. */
async function readLog(data: MemoryData, limits: StoreLimits, logId: string, readOptions: ReadOptions): Promise<LogEntry[]> {
  assertLogId(logId, limits)
  const { after: from = 0, limit } = readOptions
  if (typeof from !== 'number' || Number.isNaN(from)) {
    throw new HarnessError('INVALID_ARGUMENT', `read's after must be a seq (a number >= 0), not ${String(from)}.`)
  }
  const max = limit === undefined ? Number.POSITIVE_INFINITY : checkCount(limit, "read's limit")
  await tick()
  const log = data.logs.get(logId) ?? []
  const after = Math.max(0, Math.floor(from))
  const end = Math.min(log.length, after + max)
  const entries: LogEntry[] = []
  for (let i = after; i < end; i++) entries.push({ seq: i + 1, record: JSON.parse(log[i]!) as LogRecord })
  return entries
}

/** The session listings: the memory store has no index, so it sorts what it holds (fine in one process). */
function memorySessions(data: MemoryData): SessionListStore {
  const page = (ids: Iterable<string>, after: string | undefined, limit: number) =>
    [...ids]
      .filter((id) => after === undefined || compareCodePoints(id, after) > 0)
      .sort(compareCodePoints)
      .slice(0, limit)
  return {
    async list(options) {
      const { after, limit } = checkListSessionsOptions(options)
      await tick()
      // A log with no records is no session (delete removes the entry; a data set shared
      // with other code may hold an empty one).
      const ids = [...data.logs].filter(([, log]) => log.length > 0).map(([logId]) => logId)
      return page(ids, after, limit)
    },
    async waiting(options) {
      const { after, limit } = checkListSessionsOptions(options)
      await tick()
      const ids = [...data.wakeups].filter(([, at]) => at === WAITING_FOR_PERSON).map(([logId]) => logId)
      return page(ids, after, limit)
    },
  }
}

/** The clock's time, refused with `INVALID_ARGUMENT` when it is not a finite number of ms. */
function checkedNow(clock: Clock): () => number {
  return () => {
    const time = clock.now()
    if (typeof time !== 'number' || !Number.isFinite(time)) {
      throw new HarnessError('INVALID_ARGUMENT', `clock.now() must return a finite number of ms since the epoch, not ${String(time)}.`)
    }
    return time
  }
}

/** Leases in the data set: each call checks and changes them in one synchronous step after a tick. */
function memoryLeases(data: MemoryData, limits: StoreLimits, now: () => number, holder: number): LeaseStore {
  const closed = data.closed
  const dead = (lease: { instance?: number }) => lease.instance !== undefined && closed?.has(lease.instance) === true
  return {
    async acquire(logId, owner, ttlMs) {
      assertLogId(logId, limits)
      checkOwner(owner)
      const ttl = checkLeaseTtl(ttlMs)
      await tick()
      const at = now()
      const current = data.leases.get(logId)
      if (closed?.has(holder)) throw closedError()
      if (current && current.expiresAt > at && current.owner !== owner && !dead(current)) {
        throw new LeaseHeldError(logId, current.expiresAt)
      }
      // From the data set's one counter: greater than every fence before, of any session.
      const next = { owner, fence: ++data.fences.last, expiresAt: timeAfter(at, ttl), instance: holder }
      data.leases.set(logId, next)
      return { logId, owner, fence: next.fence, expiresAt: next.expiresAt }
    },
    async renew(lease, ttlMs) {
      checkLease(lease, limits)
      const ttl = checkLeaseTtl(ttlMs)
      await tick()
      const at = now()
      const current = data.leases.get(lease.logId)
      if (!current || current.fence !== lease.fence || current.owner !== lease.owner || current.expiresAt <= at) {
        throw new LeaseLostError(lease.logId)
      }
      current.expiresAt = timeAfter(at, ttl)
      return { ...lease, expiresAt: current.expiresAt }
    },
    async release(lease) {
      checkLease(lease, limits)
      await tick()
      const current = data.leases.get(lease.logId)
      if (!current || current.fence !== lease.fence || current.owner !== lease.owner) {
        throw new LeaseLostError(lease.logId, 'is no longer held by this owner, so it was not released')
      }
      // Nothing stays behind: the fences' counter is global.
      data.leases.delete(lease.logId)
    },
    async orphans(limit) {
      const max = checkCount(limit, "orphans' limit")
      await tick()
      const at = now()
      const ids = [...data.leases].filter(([, lease]) => lease.expiresAt > at && dead(lease)).map(([logId]) => logId)
      return ids.sort(compareCodePoints).slice(0, max)
    },
  }
}

/** Holder ids of memory store instances, unique in the process. */
let lastHolder = 0

const closedError = () =>
  new HarnessError('INVALID_ARGUMENT', 'This memory store instance was closed: its leases are orphans now. Open a new instance.')

/** Wakeups in the data set, one per session: due and claim read them in `compareWakeups` order. */
/** Who listens for wakeups made due at once, per data set: every instance on it, as every process on one database. */
const watchers = new WeakMap<MemoryData, Set<() => void>>()

function memoryWakeups(data: MemoryData, limits: StoreLimits, now: () => number): WakeupStore {
  return {
    async schedule(logId, at) {
      assertLogId(logId, limits)
      const when = checkTime(at, 'A wakeup time')
      await tick()
      data.wakeups.set(logId, when)
      if (when <= now()) for (const listener of watchers.get(data) ?? []) listener()
    },
    async watch(listener) {
      const set = watchers.get(data) ?? new Set()
      watchers.set(data, set)
      // Each subscription is its own, even for the same function.
      const own = () => {
        try {
          listener()
        } catch {}
      }
      set.add(own)
      return async () => void set.delete(own)
    },
    async cancel(logId) {
      assertLogId(logId, limits)
      await tick()
      data.wakeups.delete(logId)
    },
    async due(limit) {
      const max = checkCount(limit, "due's limit")
      await tick()
      return dueNow(data, now(), max)
    },
    async claim(limit, holdMs) {
      const max = checkCount(limit, "claim's limit")
      const hold = checkDuration(holdMs, 'holdMs')
      await tick()
      const at = now()
      const taken = dueNow(data, at, max)
      for (const wakeup of taken) data.wakeups.set(wakeup.logId, timeAfter(at, hold))
      return taken
    },
  }
}

function dueNow(data: MemoryData, now: number, limit: number): Wakeup[] {
  const due: Wakeup[] = []
  for (const [logId, at] of data.wakeups) if (at <= now) due.push({ logId, at })
  due.sort(compareWakeups)
  return due.slice(0, limit)
}
