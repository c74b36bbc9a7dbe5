import type { ConformanceOptions, StoreContext } from '@tanstack/ai-harness-conformance'
import { createMemoryData, dumpMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import {
  type AppendOptions,
  assertLogId,
  type Clock,
  type HarnessStore,
  type Lease,
  LeaseHeldError,
  LeaseLostError,
  type LeaseStore,
  type LogEntry,
  LogConflictError,
  type LogRecord,
  prepareAppend,
  prepareBatch,
  type WakeupStore,
  checkListSessionsOptions,
  compareCodePoints,
  compareWakeups,
  RecordTooLargeError,
} from '@tanstack/ai-harness/store'
import { unfencedAppends } from '@tanstack/ai-harness/testing'

/**
 * Stores that are each wrong in exactly one way, built by changing one thing of the
 * memory store. The suite is only as good as the broken stores it catches: its own test
 * proves that each one fails exactly the cases listed with it, and passes all the others.
 */
export type Memory = ReturnType<typeof memoryStore>
export interface BreakerContext {
  /** The namespace's memory data (shared by every instance of the namespace). */
  readonly data: MemoryData
  /** The case's clock. */
  readonly clock: Clock
  /** Bytes a broken store keeps outside `data` (a dead-letter copy); part of its dump. */
  readonly rejected: string[]
  /** The namespace the instance was opened on. */
  readonly namespace: string
}
export type Breaker = (store: Memory, context: BreakerContext) => HarnessStore

/** Which part of the memory data every namespace shares: a store that ignores its namespace there. */
export type SharedPart = 'logs' | 'leases' | 'wakeups'

export interface BrokenStore {
  /** The cases it must fail, and no other. */
  readonly fails: readonly string[]
  /** What the message of its first failing case says: the mistake, in the contract's words. */
  readonly says: string | RegExp
  readonly make: Breaker
  readonly shared?: SharedPart
  /**
   * Cases this store may fail or pass from run to run (its mistake shows only when a timer
   * of the case meets a renewal of the store's): neither listed nor counted. Say why beside it.
   */
  readonly mayFail?: readonly string[]
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve))
/** A round trip to a database server: long enough for other instances to run between two. */
export const roundTrip = () => new Promise<void>((resolve) => setTimeout(resolve, 1))
/** What a UTF-8 round trip makes of a string: each lone surrogate becomes U+FFFD. */
const wellFormed = (text: string) => Buffer.from(text, 'utf8').toString('utf8')

/** The memory store's read over a log of JSON texts, as a function of the rows it can see. */
function readRows(rows: readonly (string | undefined)[], after = 0, limit?: number): LogEntry[] {
  const out: LogEntry[] = []
  for (let i = Math.max(0, after); i < rows.length && (limit === undefined || out.length < limit); i++) {
    const row = rows[i]
    if (row !== undefined) out.push({ seq: i + 1, record: JSON.parse(row) as LogRecord })
  }
  return out
}

/**
 * Every check of the memory store's append but the seq: ids, records, limits and the
 * fence. Breakers that rewrite `append` call it, so they stay right in all else.
 */
function checkAppend(
  store: Memory,
  data: MemoryData,
  logId: string,
  expectedSeq: number,
  records: readonly LogRecord[],
  options?: AppendOptions,
) {
  const batch = prepareAppend(logId, expectedSeq, records, store.limits, options)
  const lease = options?.lease
  const current = data.leases.get(logId)
  const fenced = () => {
    if (lease && !(current && current.owner === lease.owner && current.fence === lease.fence)) throw new LeaseLostError(logId)
  }
  return { batch, fenced }
}

/** A store whose log ids go through `key` before they reach the data: a store that does not keep ids exact. */
export function keyedIds(key: (id: string) => string): Breaker {
  // The id is checked as given, then changed on its way to the data.
  const keyOf = (store: Memory, id: string) => {
    assertLogId(id, store.limits)
    return key(id)
  }
  return (store) => ({
    ...store,
    append: async (logId, seq, records, options) => store.append(keyOf(store, logId), seq, records, options),
    read: async (logId, options) => store.read(keyOf(store, logId), options),
    delete: async (logId) => store.delete(keyOf(store, logId)),
  })
}

/** `value` with `fn` applied to every string in it, keys included. */
function mapStrings(value: unknown, fn: (text: string) => string): unknown {
  if (typeof value === 'string') return fn(value)
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, fn))
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [fn(k), mapStrings(v, fn)]))
  return value
}

export function withLeases(store: Memory, leases: Partial<LeaseStore>): HarnessStore {
  return { ...store, leases: { ...store.leases, ...leases } }
}
export function withWakeups(store: Memory, wakeups: Partial<WakeupStore>): HarnessStore {
  return { ...store, wakeups: { ...store.wakeups, ...wakeups } }
}

/** The delete cases that append at old seqs after a delete: a store that lands such an append fails them all. */
const STALE_APPENDS_AFTER_DELETE = [
  'log.delete.warm-caches',
  'log.delete.fresh-instance',
  'log.delete.stale-writes-no-trace',
  'log.delete.racing-writers',
  'log.delete.racing-writers-no-trace',
  'log.delete.concurrent',
]

export const brokenStores: Record<string, BrokenStore> = {
  // ---- the first nine ---------------------------------------------------------------
  'no compare-and-set': {
    fails: [
      'log.append.stale',
      'log.append.stale-inside-batch',
      'log.append.future',
      'log.append.retry-landed',
      'log.race.same-seq',
      'log.append.big-batch',
      'log.append.next-seq',
      'log.delete.large',
      'log.fence.current-lease',
      'log.namespaces-isolated',
      'durable.second-writer.conflict',
      ...STALE_APPENDS_AFTER_DELETE,
      'lease.skew.beyond-bound',
    ],
    says: 'stale append: expected an error with code LOG_CONFLICT',
    make: (store, { data }) => ({
      ...store,
      async append(logId, expectedSeq, records, options) {
        const { batch, fenced } = checkAppend(store, data, logId, expectedSeq, records, options)
        await tick()
        fenced()
        const log = data.logs.get(logId) ?? []
        log.push(...batch.json)
        data.logs.set(logId, log)
        return { nextSeq: log.length + 1 }
      },
    }),
  },
  'half a batch written when a record is refused': {
    fails: ['log.atomic.refused-batch', 'log.limits.batch', 'log.atomic.refused-big-batch'],
    says: 'the log after the refused batch',
    make: (store, { data }) => ({
      ...store,
      async append(logId, expectedSeq, records, options) {
        const { fenced } = checkAppend(store, data, logId, expectedSeq, [], options)
        await tick()
        fenced()
        const log = data.logs.get(logId) ?? []
        if (log.length + 1 !== expectedSeq) throw new LogConflictError(logId, expectedSeq, log.length + 1)
        data.logs.set(logId, log)
        // Checks each record as it writes it: a bad one stops the batch halfway.
        for (const record of records) log.push(...prepareBatch([record], store.limits).json)
        return { nextSeq: log.length + 1 }
      },
    }),
  },
  'seq compared as text': {
    fails: [
      'isolation.path-ids',
      'log.read.runtime-pages',
      'durable.step.throw-records-nothing',
      'log.atomic.no-half-batch',
      'log.read.paging',
      'log.read.ordering',
      'log.read.your-writes',
      'log.race.retry-loops',
      'log.read.paging-large',
      'log.read.paging-boundaries',
      'log.append.big-batch',
      'log.append.next-seq',
      'log.delete.large',
      'durable.step.crash-before-step-logged',
      'durable.step.crash-between-steps',
      'durable.step.crash-before-result',
      'durable.cut-batch.rules',
      'wait.sleep.parks-and-worker-wakes',
      'wait.ask.answer-resumes',
      'approval.approve.worker-resumes',
      'approval.deny.denial-result',
      'approval.decision.survives-crash',
      'approval.cut-batch.waiting-not-cut',
      'wait.ask.answer-while-parking',
      'wait.ask.logged-answer-after-crash',
      'agent.waits-for-a-person',
      'durable.call-id.reused-in-a-later-turn',
      'durable.call-id.repeated-in-a-batch',
      'durable.ask.answer-refused-by-the-tool-reopens',
      'durable.middleware-tool.crash',
      'durable.secrets.every-form',
      'fault.ambiguous-answer',
      'durable.retry.count-kept-across-crash',
      'wait.retry.parks-until-due',
      'agent.crash-points',
      'stream.order',
      'stream.sse.resume',
      'stream.ndjson.resume',
      'lock.exclusive',
      'durable.retry.attempts-logged',
      'durable.retry.final-stays-failed',
      'durable.retry.timeouts',
      'durable.retry.failure-without-secret',
      'durable.verify.crash-points',
      'durable.verify.unknown-asks-a-person',
      'durable.undo.crash-points',
      'durable.undo.cancel-crash-points',
      'durable.undo.agent-cancel-crash-points',
    ],
    // Its readers' logs are a few batch records, under ten seqs (where text order first differs), unless a slow reader sees many.
    mayFail: ['stream.readers.many'],
    says: 'pages are dense from after + 1',
    make: (store) => ({
      ...store,
      async read(logId, options = {}) {
        const all = await store.read(logId)
        const after = String(options.after ?? 0)
        const sorted = all.filter((e) => String(e.seq) > after).sort((a, b) => (String(a.seq) < String(b.seq) ? -1 : 1))
        return sorted.slice(0, options.limit ?? sorted.length)
      },
    }),
  },
  'stale reads after append': {
    fails: [
      'isolation.generated',
      'isolation.path-ids',
      'lock.exclusive',
      'log.append.future',
      'log.append.empty-batch',
      'log.read.your-writes',
      'log.limits.record',
      'log.limits.batch',
      'log.delete.only-target',
      'log.id.exact',
      'log.delete.large',
      'durable.step.json-only',
      'wait.ask.answer-while-parking',
      'log.delete.warm-caches',
      'log.delete.fresh-instance',
      'log.delete.racing-writers',
    ],
    says: 'the log after a refused append',
    make: (store) => {
      // A replica that serves what it saw one read ago.
      const lagging = new Map<string, LogEntry[]>()
      return {
        ...store,
        async read(logId, options = {}) {
          const fresh = await store.read(logId)
          const served = lagging.get(logId) ?? fresh
          lagging.set(logId, fresh)
          const after = options.after ?? 0
          const page = served.filter((e) => e.seq > after)
          return page.slice(0, options.limit ?? page.length)
        },
      }
    },
  },
  'a batch keyed by its first seq': {
    fails: [
      'isolation.generated',
      'lease.fences.long-sequence',
      'log.append.stale-inside-batch',
      'log.append.retry-landed',
      'log.delete.only-target',
      'log.race.same-seq',
      'log.race.retry-loops',
      'log.append.big-batch',
      'log.append.next-seq',
      'log.fence.current-lease',
      'durable.second-writer.conflict',
      'sessions.list.delete',
      'log.delete.concurrent',
      'lease.after-delete',
      'lease.skew.beyond-bound',
      'stream.producer.dies',
    ],
    says: 'append at 6 inside batch 5-7: expected an error with code LOG_CONFLICT',
    make: (store, { data }) => {
      const starts = new Map<string, Set<number>>()
      return {
        ...store,
        async append(logId, expectedSeq, records, options) {
          const { batch, fenced } = checkAppend(store, data, logId, expectedSeq, records, options)
          if (batch.json.length === 0) return { nextSeq: expectedSeq }
          await tick()
          fenced()
          const log = data.logs.get(logId) ?? []
          const taken = starts.get(logId) ?? new Set<number>()
          // Only a batch that starts at the same seq collides; the log is rewritten from there.
          if (taken.has(expectedSeq) || expectedSeq > log.length + 1) throw new LogConflictError(logId, expectedSeq)
          taken.add(expectedSeq)
          starts.set(logId, taken)
          log.splice(expectedSeq - 1, batch.json.length, ...batch.json)
          data.logs.set(logId, log)
          return { nextSeq: expectedSeq + batch.json.length }
        },
      }
    },
  },
  'keeps the bytes of a refused batch': {
    fails: [
      'content.limits-utf8',
      'log.atomic.refused-batch',
      'log.id.refused-no-trace',
      'log.delete.stale-writes-no-trace',
      'log.delete.racing-writers-no-trace',
    ],
    says: 'the dump holds bytes of a refused batch',
    make: (store, { rejected }) => ({
      ...store,
      async append(logId, expectedSeq, records, options) {
        try {
          return await store.append(logId, expectedSeq, records, options)
        } catch (error) {
          // A "dead letter" copy: exactly what a store must never keep.
          rejected.push(JSON.stringify(records, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)))
          throw error
        }
      },
    }),
  },
  'a stale owner can still renew': {
    fails: ['race.renew-release-takeover', 'lease.stale-renew', 'lease.release', 'lease.skew.beyond-bound'],
    says: 'stale renew: expected an error with code LEASE_LOST',
    make: (store, { data, clock }) =>
      withLeases(store, {
        async renew(lease, ttlMs) {
          await tick()
          // Checks that the session's lease is live, but not that it is the caller's.
          const current = data.leases.get(lease.logId)
          if (!current || current.expiresAt <= clock.now()) throw new LeaseLostError(lease.logId)
          current.expiresAt = clock.now() + ttlMs
          return { ...lease, expiresAt: current.expiresAt }
        },
      }),
  },
  'renews from a per-instance record of its leases while its own clock says they live': {
    fails: ['lease.after-delete', 'lease.skew.beyond-bound'],
    // A lost lock's signal aborts when a renewal meets the lost lease; this store's own record renews it or not, by timing.
    mayFail: ['lock.signal'],
    says: 'renew of the lease of host-0 after a delete: expected an error with code LEASE_LOST',
    make: (store, { data, clock }) => {
      // A saved read per renewal: the instance trusts the lease it took until its own
      // clock says it ended, and writes the new expiry without looking who holds it now.
      const mine = new Map<string, Lease>()
      const key = (lease: Lease) => `${lease.logId}\u0000${lease.owner}\u0000${lease.fence}`
      return withLeases(store, {
        async acquire(logId, owner, ttlMs) {
          const lease = await store.leases.acquire(logId, owner, ttlMs)
          mine.set(key(lease), lease)
          return lease
        },
        async renew(lease, ttlMs) {
          const known = mine.get(key(lease))
          if (!known || known.expiresAt <= clock.now()) return store.leases.renew(lease, ttlMs)
          await tick()
          const renewed = { ...known, expiresAt: clock.now() + ttlMs }
          data.leases.set(lease.logId, { owner: lease.owner, fence: lease.fence, expiresAt: renewed.expiresAt })
          mine.set(key(lease), renewed)
          return renewed
        },
        async release(lease) {
          mine.delete(key(lease))
          return store.leases.release(lease)
        },
      })
    },
  },
  'fences that do not increase': {
    fails: [
      'isolation.generated',
      'isolation.path-ids',
      'race.fenced-append-takeover',
      'race.renew-release-takeover',
      'lease.fences.long-sequence',
      'wait.cancel.not-resumed',
      'log.fence.superseded',
      'log.fence.released',
      'log.fence.deleted',
      'lease.expiry',
      'lease.stale-renew',
      'lease.release',
      'lease.fences-increase',
      'lease.sub-second',
      'lease.live-until-expiry',
      'lease.renew-expired-untaken',
      'lease.id.exact',
      'durable.step.crash-before-step-logged',
      'durable.step.crash-between-steps',
      'durable.step.crash-before-result',
      'durable.cut-batch.rules',
      'wait.sleep.parks-and-worker-wakes',
      'wait.ask.answer-resumes',
      'approval.approve.worker-resumes',
      'approval.deny.denial-result',
      'approval.decision.survives-crash',
      'approval.cut-batch.waiting-not-cut',
      'wait.handoff.resumed-at-once',
      'agent.waits-for-a-person',
      'agent.cut-gets-tool-error',
      'log.fence.forged',
      'durable.step.secret-refused',
      'durable.replay-never.steps-stay',
      'durable.lease.one-host',
      'wait.sleep.wake-time-kept-across-crash',
      'wait.ask.answer-while-parking',
      'wait.ask.logged-answer-after-crash',
      'wait.worker.dead-host',
      'durable.call-id.reused-in-a-later-turn',
      'durable.ask.answer-refused-by-the-tool-reopens',
      'durable.tool-error.harness-code-thrown-by-a-tool',
      'durable.middleware-tool.crash',
      'durable.secrets.every-form',
      'fault.same-host-id',
      'fault.store-call-never-answers',
      'fault.ambiguous-turn-started',
      'fault.ambiguous-answer',
      'durable.retry.count-kept-across-crash',
      'durable.retry.final-stays-failed',
      'wait.retry.parks-until-due',
      'wait.ask.listed-as-waiting',
      'agent.crash-points',
      'lease.after-delete',
      'lease.skew.within-bound',
      'lease.skew.beyond-bound',
      'lock.exclusive',
      'lock.result',
      'lock.fenced',
      'lease.orphans.live-holder',
      'lease.orphans.dead-holder',
      'durable.verify.crash-points',
      'durable.verify.unknown-asks-a-person',
      'durable.once.crash-points',
      'durable.undo.crash-points',
      'durable.undo.cancel-crash-points',
      'durable.undo.agent-cancel-crash-points',
    ],
    says: 'as acquire returned it',
    make: (store) =>
      withLeases(store, {
        async acquire(logId, owner, ttlMs) {
          const lease = await store.leases.acquire(logId, owner, ttlMs)
          return { ...lease, fence: 1 }
        },
      }),
  },
  'claims that are not atomic': {
    fails: ['race.claim-cancel-delete', 'wakeup.claim-race'],
    says: 'a wakeup was claimed twice',
    make: (store, { clock }) =>
      withWakeups(store, {
        async claim(limit, holdMs) {
          // Lists, then moves each one: two workers in between both take it.
          const due = await store.wakeups.due(limit)
          for (const w of due) await store.wakeups.schedule(w.logId, clock.now() + holdMs)
          return due
        },
      }),
  },
  // ---- paging ----------------------------------------------------------------------
  'pages internally by 256 rows and skips the row after each internal page': {
    // Not stream.order: its chunks are batched into a few records, so no page of its log is 256 rows long.
    fails: ['log.read.runtime-pages', 'log.read.paging-large', 'log.append.big-batch', 'log.delete.large'],
    says: 'has seq 258, not 257',
    make: (store, { data }) => ({
      ...store,
      async read(logId, options = {}) {
        assertLogId(logId, store.limits)
        await tick()
        const rows = data.logs.get(logId) ?? []
        const out: LogEntry[] = []
        // Fetches 256 rows at a time; the next fetch starts one row too far.
        for (let from = options.after ?? 0; from < rows.length; from += 257) {
          out.push(...readRows(rows.slice(0, from + 256), from))
          if (options.limit !== undefined && out.length >= options.limit) break
        }
        return options.limit === undefined ? out : out.slice(0, options.limit)
      },
    }),
  },
  'pages internally by 256 rows and repeats the last row of each internal page': {
    // Not stream.order: its chunks are batched into a few records, so no page of its log is 256 rows long.
    fails: ['log.read.runtime-pages', 'log.read.paging-large', 'log.append.big-batch', 'log.delete.large'],
    says: 'has seq 256, not 257',
    make: (store, { data }) => ({
      ...store,
      async read(logId, options = {}) {
        assertLogId(logId, store.limits)
        await tick()
        const rows = data.logs.get(logId) ?? []
        const out: LogEntry[] = []
        for (let from = options.after ?? 0; from < rows.length; from += 255) {
          out.push(...readRows(rows.slice(0, from + 256), from))
          if (options.limit !== undefined && out.length >= options.limit) break
        }
        return options.limit === undefined ? out : out.slice(0, options.limit)
      },
    }),
  },
  'caps pages at 100 and ends the log after its first 100 rows': {
    fails: [
      'log.read.runtime-pages',
      'log.read.ordering',
      'log.read.paging-large',
      'log.read.paging-boundaries',
      'log.append.big-batch',
      'log.delete.large',
    ],
    says: 'page by page ended after 100',
    make: (store, { data }) => ({
      ...store,
      async read(logId, options = {}) {
        assertLogId(logId, store.limits)
        await tick()
        // One capped query of the first 100 rows, then paged in memory: past it looks like the end.
        const rows = (data.logs.get(logId) ?? []).slice(0, 100)
        return readRows(rows, options.after ?? 0, Math.min(options.limit ?? 100, 100))
      },
    }),
  },
  'returns one entry more than limit': {
    fails: [
      'log.read.runtime-pages',
      'store.limit-zero',
      'log.read.paging',
      'log.read.ordering',
      'log.read.paging-large',
      'log.read.paging-boundaries',
      'log.delete.warm-caches',
    ],
    says: 'a page of 5 entries for limit 4',
    make: (store) => ({
      ...store,
      read: (logId, options = {}) => store.read(logId, options.limit === undefined ? options : { ...options, limit: options.limit + 1 }),
    }),
  },
  'an unlimited read that starts past seq 1 returns the log from the start': {
    fails: [
      'isolation.generated',
      'isolation.path-ids',
      'content.generated',
      'content.multibyte-large',
      'content.limits-utf8',
      'race.fenced-append-takeover',
      'durable.host.store-clock-and-fence',
      'durable.step.throw-records-nothing',
      'log.append.first-batch',
      'log.append.stale',
      'log.append.stale-inside-batch',
      'log.append.future',
      'log.append.retry-landed',
      'log.append.empty-batch',
      'log.atomic.refused-batch',
      'log.atomic.no-half-batch',
      'log.read.paging',
      'log.read.ordering',
      'log.read.your-writes',
      'log.roundtrip.hard-json',
      'log.limits.record',
      'log.limits.batch',
      'log.delete.only-target',
      'log.race.same-seq',
      'log.race.retry-loops',
      'log.read.paging-large',
      'log.read.paging-boundaries',
      'log.id.exact',
      'log.id.long',
      'log.append.big-batch',
      'log.append.next-seq',
      'log.atomic.refused-big-batch',
      'log.delete.large',
      'log.delete.no-trace',
      'log.roundtrip.surrogates',
      'log.roundtrip.no-shared-references',
      'log.fence.current-lease',
      'log.fence.superseded',
      'log.fence.released',
      'log.fence.deleted',
      'log.namespaces-isolated',
      'durable.step.crash-before-step-logged',
      'durable.step.crash-between-steps',
      'durable.step.crash-before-result',
      'durable.second-writer.conflict',
      'wait.sleep.parks-and-worker-wakes',
      'wait.sleep.wake-time-kept-across-crash',
      'wait.ask.answer-resumes',
      'approval.approve.worker-resumes',
      'approval.deny.denial-result',
      'approval.decision.survives-crash',
      'approval.decision.second-refused',
      'approval.cut-batch.waiting-not-cut',
      'wait.ask.answer-while-parking',
      'wait.worker.dead-host',
      'wait.handoff.resumed-at-once',
      'wait.cancel.not-resumed',
      'agent.waits-for-a-person',
      'durable.call-id.reused-in-a-later-turn',
      'durable.call-id.repeated-in-a-batch',
      'durable.ask.answer-refused-by-the-tool-reopens',
      'durable.tool-error.harness-code-thrown-by-a-tool',
      'durable.middleware-tool.crash',
      'durable.step.after-the-call-settled',
      'durable.sleep.past-max-time',
      'durable.names.checked-before-side-effects',
      'fault.same-host-id',
      'fault.store-call-never-answers',
      'fault.ambiguous-turn-started',
      'fault.ambiguous-answer',
      'durable.retry.attempts-logged',
      'durable.retry.count-kept-across-crash',
      'durable.retry.final-stays-failed',
      'wait.retry.parks-until-due',
      'durable.retry.timeouts',
      'durable.retry.failure-without-secret',
      'lease.skew.beyond-bound',
      ...STALE_APPENDS_AFTER_DELETE,
    ],
    says: 'pages are dense from after + 1',
    make: (store) => ({
      ...store,
      read: (logId, options = {}) =>
        options.limit === undefined && (options.after ?? 0) > 0 ? store.read(logId) : store.read(logId, options),
    }),
  },
  'keeps full pages in a per-instance cache that a delete does not clear': {
    fails: ['log.delete.large'],
    says: 'entries of a page of the deleted log',
    make: (store) => {
      // Full pages of an append-only log never change, so it caches them... until a delete.
      const pages = new Map<string, LogEntry[]>()
      return {
        ...store,
        async read(logId, options = {}) {
          const key = JSON.stringify([logId, options.after ?? 0, options.limit])
          const cached = pages.get(key)
          if (cached) return structuredClone(cached)
          const page = await store.read(logId, options)
          if (options.limit !== undefined && page.length === options.limit) pages.set(key, structuredClone(page))
          return page
        },
        async delete(logId) {
          await store.delete(logId)
          for (const key of pages.keys()) if (JSON.parse(key)[0] === logId) pages.delete(key)
        },
      }
    },
  },

  // ---- exact ids --------------------------------------------------------------------
  'trims log ids': {
    fails: ['isolation.generated', 'log.read.isolation', 'log.id.exact', 'log.id.long', 'sessions.list', 'sessions.list.delete'],
    says: 'treats it as the same log as a look-alike id',
    make: keyedIds((id) => id.trim()),
  },
  'normalises log ids to NFC': {
    fails: ['log.id.exact', 'sessions.list'],
    says: 'treats it as the same log as a look-alike id',
    make: keyedIds((id) => id.normalize('NFC')),
  },
  'folds the case of log ids': {
    fails: ['isolation.generated', 'isolation.path-ids', 'log.read.isolation', 'log.id.exact', 'sessions.list', 'sessions.list.delete'],
    says: 'treats it as the same log as a look-alike id',
    make: keyedIds((id) => id.toLowerCase()),
  },
  'cuts log ids at 64 bytes': {
    fails: ['log.id.long'],
    says: 'the store keeps only part of this',
    make: keyedIds((id) => Buffer.from(id).subarray(0, 64).toString('utf8')),
  },
  'normalises lease ids to NFKC': {
    fails: ['lease.id.exact'],
    says: 'the same session as a look-alike id',
    make: (store) =>
      withLeases(store, {
        acquire: async (logId, owner, ttl) => ({ ...(await store.leases.acquire(logId.normalize('NFKC'), owner, ttl)), logId }),
        renew: async (lease, ttl) => ({
          ...(await store.leases.renew({ ...lease, logId: lease.logId.normalize('NFKC') }, ttl)),
          logId: lease.logId,
        }),
        release: (lease) => store.leases.release({ ...lease, logId: lease.logId.normalize('NFKC') }),
      }),
  },
  'trims wakeup ids': {
    fails: ['isolation.generated', 'wakeup.cancel-exact', 'wakeup.id.exact', 'sessions.waiting'],
    says: "after cancel('a'), the wakeups due",
    make: (store) =>
      withWakeups(store, {
        schedule: (logId, at) => store.wakeups.schedule(logId.trim(), at),
        cancel: (logId) => store.wakeups.cancel(logId.trim()),
      }),
  },
  'keeps a log id with a lone surrogate as UTF-8 (U+FFFD)': {
    fails: ['log.id.refused', 'log.id.refused-no-trace'],
    says: 'append to a lone high surrogate: expected an error with code INVALID_ARGUMENT',
    make: (store) => {
      const utf8 = (id: string) => Buffer.from(id, 'utf8').toString('utf8')
      const accept = (id: string) => (id.includes('\u0000') || id === '' ? id : utf8(id))
      return {
        ...store,
        append: (logId, seq, records, options) => store.append(accept(logId), seq, records, options),
        read: (logId, options) => store.read(accept(logId), options),
        delete: (logId) => store.delete(accept(logId)),
        leases: { ...store.leases, acquire: (logId, owner, ttl) => store.leases.acquire(accept(logId), owner, ttl) },
        wakeups: {
          ...store.wakeups,
          schedule: (logId, at) => store.wakeups.schedule(accept(logId), at),
          cancel: (logId) => store.wakeups.cancel(accept(logId)),
        },
      }
    },
  },
  'does not check the id in wakeups.cancel': {
    fails: ['log.id.refused', 'log.id.refused-no-trace'],
    says: 'wakeups.cancel of the empty id: expected an error with code INVALID_ARGUMENT',
    make: (store, { data }) =>
      withWakeups(store, {
        async cancel(logId) {
          await tick()
          data.wakeups.delete(logId)
        },
      }),
  },
  'checks ids against the default maximum instead of its declared one': {
    fails: ['log.id.refused', 'log.id.refused-no-trace'],
    says: 'append to an id of 201 bytes: expected an error with code INVALID_ARGUMENT',
    // Declares 200 bytes, but every method still accepts up to the default 512.
    make: (store) => ({ ...store, limits: { ...store.limits, maxLogIdBytes: 200 } }),
  },

  // ---- big batches ------------------------------------------------------------------
  'writes a batch of more than 25 records in chunks of 25': {
    fails: ['log.append.big-batch'],
    says: /part of a batch|not written in one step/,
    make: (store, { data }) => ({
      ...store,
      async append(logId, expectedSeq, records, options) {
        const { batch, fenced } = checkAppend(store, data, logId, expectedSeq, records, options)
        if (batch.json.length <= 25) return store.append(logId, expectedSeq, records, options)
        await tick()
        fenced()
        const log = data.logs.get(logId) ?? []
        if (log.length + 1 !== expectedSeq) throw new LogConflictError(logId, expectedSeq, log.length + 1)
        data.logs.set(logId, log)
        for (let i = 0; i < batch.json.length; i += 25) {
          log.push(...batch.json.slice(i, i + 25))
          await roundTrip()
        }
        return { nextSeq: expectedSeq + batch.json.length }
      },
    }),
  },
  'checks and writes a batch 25 records at a time': {
    fails: ['log.atomic.refused-batch', 'log.atomic.refused-big-batch'],
    says: 'the log after the refused batch',
    make: (store) => ({
      ...store,
      async append(logId, expectedSeq, records, options) {
        let next = expectedSeq
        for (let i = 0; i < records.length; i += 25) next = (await store.append(logId, next, records.slice(i, i + 25), options)).nextSeq
        return { nextSeq: next }
      },
    }),
  },
  'returns the next seq from the batch, not the log': {
    fails: [
      'log.read.paging-large',
      'log.read.paging-boundaries',
      'log.append.big-batch',
      'log.append.next-seq',
      'log.delete.large',
      'log.delete.no-trace',
      'log.delete.fresh-instance',
    ],
    says: 'returned nextSeq',
    make: (store) => ({
      ...store,
      async append(logId, expectedSeq, records, options) {
        await store.append(logId, expectedSeq, records, options)
        return { nextSeq: records.length + 1 }
      },
    }),
  },
  'refuses batches over 1000 records though it declares no maxBatchRecords': {
    fails: ['log.append.big-batch'],
    says: 'so it must take this batch',
    make: (store) => ({
      ...store,
      async append(logId, expectedSeq, records, options) {
        if (records.length > 1000) throw new Error('too many rows in one insert')
        return store.append(logId, expectedSeq, records, options)
      },
    }),
  },

  // ---- delete -----------------------------------------------------------------------
  'deletes only the first 1000 records of a log': {
    fails: ['log.delete.large'],
    says: 'entries of the deleted log',
    make: (store, { data }) => ({
      ...store,
      async delete(logId) {
        const log = data.logs.get(logId)
        await store.delete(logId)
        // One page of a batched delete; the rest stays, as a shorter log.
        if (log && log.length > 1000) data.logs.set(logId, log.slice(1000))
      },
    }),
  },
  'trusts a per-instance tail cache that another instance’s delete leaves stale': {
    fails: ['log.delete.large', ...STALE_APPENDS_AFTER_DELETE],
    says: 'after the delete: expected an error with code LOG_CONFLICT',
    make: (store, { data }) => {
      // As a key-value store with a conditional put per batch: a seq this instance saw
      // end a batch is written to directly, checking only that no row holds it yet.
      const tails = new Map<string, number>()
      return {
        ...store,
        async append(logId, expectedSeq, records, options) {
          if (expectedSeq === 1 || tails.get(logId) !== expectedSeq) {
            const result = await store.append(logId, expectedSeq, records, options)
            tails.set(logId, result.nextSeq)
            return result
          }
          const { batch, fenced } = checkAppend(store, data, logId, expectedSeq, records, options)
          await tick()
          fenced()
          const log = data.logs.get(logId) ?? []
          if (log[expectedSeq - 1] !== undefined) throw new LogConflictError(logId, expectedSeq)
          log.length = Math.max(log.length, expectedSeq - 1)
          log.splice(expectedSeq - 1, 0, ...batch.json)
          data.logs.set(logId, log)
          tails.set(logId, expectedSeq + batch.json.length)
          return { nextSeq: expectedSeq + batch.json.length }
        },
        async read(logId, options = {}) {
          assertLogId(logId, store.limits)
          await tick()
          const page = readRows(data.logs.get(logId) ?? [], options.after, options.limit)
          const end = page.at(-1)
          if (end) tails.set(logId, Math.max(tails.get(logId) ?? 0, end.seq + 1))
          return page
        },
      }
    },
  },
  'a delete removes the records it listed, and keeps those appended meanwhile': {
    fails: ['log.delete.racing-writers', 'log.delete.racing-writers-no-trace'],
    says: 'the seqs a read right after the delete returned',
    make: (store, { data }) => ({
      ...store,
      async delete(logId) {
        // A listing, a few round trips, then a delete of the rows listed: a batch that lands
        // in between stays, and is the log from then on.
        const listed = (data.logs.get(logId) ?? []).length
        for (let i = 0; i < 8; i++) await tick()
        const late = (data.logs.get(logId) ?? []).slice(listed)
        await store.delete(logId)
        if (late.length > 0) data.logs.set(logId, late)
      },
    }),
  },
  'a delete writes a tombstone, also for a log that never existed': {
    fails: ['log.delete.stale-writes-no-trace'],
    says: 'the raw store changed after deleting a log that never existed',
    make: (store, { rejected }) => ({
      ...store,
      async delete(logId) {
        await store.delete(logId)
        rejected.push(JSON.stringify({ tombstone: logId }))
      },
    }),
  },
  'delete keeps the log’s lease': {
    fails: ['isolation.generated', 'lease.fences.long-sequence', 'log.delete.only-target', 'log.fence.deleted', 'lease.after-delete'],
    says: 'the lease of the deleted session "a" is still held',
    make: (store, { data }) => ({
      ...store,
      async delete(logId) {
        const lease = data.leases.get(logId)
        await store.delete(logId)
        if (lease) data.leases.set(logId, lease)
      },
    }),
  },

  // ---- record fidelity --------------------------------------------------------------
  'replaces lone surrogates in records with U+FFFD': {
    fails: ['log.roundtrip.surrogates'],
    says: 'never as U+FFFD',
    make: (store) => ({
      ...store,
      append: (logId, seq, records, options) =>
        store.append(
          logId,
          seq,
          records.map((r) => mapStrings(r, wellFormed) as LogRecord),
          options,
        ),
    }),
  },
  'keeps the appended objects by reference': {
    fails: ['log.roundtrip.no-shared-references', 'stream.snapshot'],
    says: 'changing the appended objects changed the log',
    make: (store, { data }) => {
      // The objects it was given, by log and seq: what it returns to reads.
      const shared = data as MemoryData & { kept?: Map<string, Map<number, LogRecord>> }
      shared.kept ??= new Map()
      const kept = shared.kept
      return {
        ...store,
        async append(logId, expectedSeq, records, options) {
          const result = await store.append(logId, expectedSeq, records, options)
          const log = kept.get(logId) ?? new Map<number, LogRecord>()
          for (const [i, record] of records.entries()) log.set(expectedSeq + i, record)
          kept.set(logId, log)
          return result
        },
        async read(logId, options) {
          const page = await store.read(logId, options)
          const log = kept.get(logId)
          return log ? page.map((entry) => ({ seq: entry.seq, record: log.get(entry.seq) ?? entry.record })) : page
        },
        async delete(logId) {
          kept.delete(logId)
          await store.delete(logId)
        },
      }
    },
  },
  'returns the same objects to every read': {
    fails: ['log.roundtrip.no-shared-references', 'stream.snapshot'],
    says: 'changing the records read returned changed the log',
    make: (store, { data }) => {
      // Parses each stored row once per instance and hands out that object every time.
      const parsed = new Map<string, { text: string; entry: LogEntry }>()
      return {
        ...store,
        async read(logId, options) {
          const page = await store.read(logId, options)
          const rows = data.logs.get(logId) ?? []
          return page.map((entry) => {
            const key = `${logId}\u0000${entry.seq}`
            const text = rows[entry.seq - 1]!
            const known = parsed.get(key)
            if (known?.text === text) return known.entry
            parsed.set(key, { text, entry })
            return entry
          })
        },
      }
    },
  },

  // ---- lease time -------------------------------------------------------------------
  'keeps lease expiry in whole seconds': {
    fails: [
      'lease.sub-second',
      'lease.live-until-expiry',
      'durable.retry.final-stays-failed',
      'durable.verify.crash-points',
      'durable.verify.unknown-asks-a-person',
      'durable.once.crash-points',
      'durable.undo.crash-points',
      'durable.undo.cancel-crash-points',
      'durable.undo.agent-cancel-crash-points',
    ],
    says: 'expiresAt is now + ttl to the ms',
    make: (store, { data }) => {
      const seconds = (ms: number) => Math.ceil(ms / 1000) * 1000
      return withLeases(store, {
        async acquire(logId, owner, ttlMs) {
          const lease = await store.leases.acquire(logId, owner, ttlMs)
          data.leases.get(logId)!.expiresAt = seconds(lease.expiresAt)
          return { ...lease, expiresAt: seconds(lease.expiresAt) }
        },
        async renew(lease, ttlMs) {
          const renewed = await store.leases.renew(lease, ttlMs)
          data.leases.get(lease.logId)!.expiresAt = seconds(renewed.expiresAt)
          return { ...renewed, expiresAt: seconds(renewed.expiresAt) }
        },
      })
    },
  },
  'a lease is still live at expiresAt': {
    fails: [
      // Its LEASE_HELD says the row's expiry, a ms after the lease acquire returned.
      'lease.acquire.exclusive',
      'race.fenced-append-takeover',
      'lease.fences.long-sequence',
      'log.fence.superseded',
      'lease.expiry',
      'lease.renew',
      'lease.fences-increase',
      'lease.sub-second',
      'lease.live-until-expiry',
      'wait.worker.dead-host',
      'lease.skew.beyond-bound',
      'lock.expiry',
      'lock.fenced',
    ],
    says: 'a lease is live only while now < expiresAt',
    make: (store, { data }) => {
      // Compares with <= instead of <: one more ms for every lease.
      const bump = (logId: string) => {
        const row = data.leases.get(logId)
        if (row) row.expiresAt += 1
      }
      return withLeases(store, {
        acquire: async (logId, owner, ttl) => {
          const lease = await store.leases.acquire(logId, owner, ttl)
          bump(logId)
          return lease
        },
        renew: async (lease, ttl) => {
          const renewed = await store.leases.renew(lease, ttl)
          bump(lease.logId)
          return renewed
        },
      })
    },
  },
  'a lease expires 1 ms before expiresAt': {
    // Its LEASE_HELD says the row's expiry, a ms before the lease acquire returned.
    fails: [
      'lease.acquire.exclusive',
      'lease.expiry',
      'lease.renew',
      'lease.sub-second',
      'lease.live-until-expiry',
      'lease.skew.within-bound',
    ],
    says: "LEASE_HELD's expiresAt is the holder's lease's expiresAt",
    make: (store, { data }) => {
      const shorten = (logId: string) => {
        const row = data.leases.get(logId)
        if (row) row.expiresAt -= 1
      }
      return withLeases(store, {
        acquire: async (logId, owner, ttl) => {
          const lease = await store.leases.acquire(logId, owner, ttl)
          shorten(logId)
          return lease
        },
        renew: async (lease, ttl) => {
          const renewed = await store.leases.renew(lease, ttl)
          shorten(lease.logId)
          return renewed
        },
      })
    },
  },
  'renews an expired lease that nobody took': {
    fails: ['lease.renew', 'lease.sub-second', 'lease.live-until-expiry', 'lease.renew-expired-untaken', 'lock.renews'],
    // Its lock's holder may renew the expired lease back to life before the taker reads it, by timing.
    mayFail: ['lock.signal'],
    says: 'renew after expiry: expected an error with code LEASE_LOST',
    make: (store, { data }) =>
      withLeases(store, {
        async renew(lease, ttlMs) {
          // Checks that the lease is still this owner's, but not that it is still live.
          const row = data.leases.get(lease.logId)
          if (row && row.owner === lease.owner && row.fence === lease.fence) row.expiresAt = Number.MAX_SAFE_INTEGER
          return store.leases.renew(lease, ttlMs)
        },
      }),
  },

  // ---- wakeups ----------------------------------------------------------------------
  'cancel removes every wakeup whose id starts with the id': {
    fails: ['wakeup.cancel-exact', 'wakeup.id.exact'],
    says: "after cancel('a'), the wakeups due",
    make: (store, { data }) =>
      withWakeups(store, {
        async cancel(logId) {
          assertLogId(logId, store.limits)
          await tick()
          for (const id of [...data.wakeups.keys()]) if (id.startsWith(logId)) data.wakeups.delete(id)
        },
      }),
  },
  'schedule keeps the hold of an earlier claim': {
    fails: ['isolation.path-ids', 'wakeup.schedule-clears-hold', 'durable.ask.answer-refused-by-the-tool-reopens'],
    says: 'a wakeup scheduled again is due at its new time',
    make: (store, { data }) => {
      // A separate "hidden until" column that only claim writes.
      const holds = data as MemoryData & { holds?: Map<string, number> }
      holds.holds ??= new Map()
      return withWakeups(store, {
        async claim(limit, holdMs) {
          const claimed = await store.wakeups.claim(limit, holdMs)
          for (const w of claimed) holds.holds!.set(w.logId, data.wakeups.get(w.logId)!)
          return claimed
        },
        async schedule(logId, at) {
          const hold = holds.holds!.get(logId)
          await store.wakeups.schedule(logId, hold !== undefined ? Math.max(at, hold) : at)
        },
      })
    },
  },
  'claim reports the end of the hold as the due time': {
    fails: ['isolation.generated', 'isolation.path-ids', 'wakeup.claim', 'wakeup.claim-original-time', 'wakeup.schedule-clears-hold'],
    says: 'a claim reports the time the wakeup was due',
    make: (store, { data }) =>
      withWakeups(store, {
        async claim(limit, holdMs) {
          const claimed = await store.wakeups.claim(limit, holdMs)
          return claimed.map((w) => ({ logId: w.logId, at: data.wakeups.get(w.logId)! }))
        },
      }),
  },
  'rounds wakeup times down to the ms': {
    fails: ['wakeup.sub-ms'],
    says: 'is reported at 0 ms',
    make: (store) => withWakeups(store, { schedule: (logId, at) => store.wakeups.schedule(logId, Math.floor(at)) }),
  },
  'keeps wakeup times in whole seconds': {
    fails: [
      'isolation.generated',
      'isolation.path-ids',
      'wakeup.due',
      'wakeup.upsert',
      'wakeup.claim',
      'wakeup.claim-original-time',
      'wakeup.cancel-exact',
      'wakeup.id.exact',
      'wakeup.schedule-clears-hold',
      'wakeup.sub-ms',
      'wakeup.namespaces-isolated',
      // The decision comes at a time with milliseconds: rounded up, the session is not due at once.
      'approval.cut-batch.waiting-not-cut',
      'sessions.waiting',
    ],
    says: 'the wakeups due, oldest first, each with its time',
    make: (store) => withWakeups(store, { schedule: (logId, at) => store.wakeups.schedule(logId, Math.ceil(at / 1000) * 1000) }),
  },
  'refuses wakeup times after the year 33658 (10^15 ms)': {
    fails: [
      'isolation.generated',
      'isolation.path-ids',
      'wakeup.time-range',
      'sessions.list.namespace',
      'sessions.waiting',
      // A turn that waits for a person keeps its wakeup at WAITING_FOR_PERSON (= MAX_TIME_MS).
      'wait.ask.answer-resumes',
      'wait.ask.listed-as-waiting',
      'wait.ask.answer-while-parking',
      'wait.ask.logged-answer-after-crash',
      // Its turn waits on a question when it is cancelled.
      'durable.undo.cancel-crash-points',
      'durable.undo.agent-cancel-crash-points',
      'wait.cancel.not-resumed',
      'agent.waits-for-a-person',
      'durable.ask.answer-refused-by-the-tool-reopens',
      'durable.secrets.every-form',
      'fault.ambiguous-answer',
      'approval.approve.worker-resumes',
      'approval.deny.denial-result',
      'approval.decision.survives-crash',
      'approval.decision.second-refused',
      'approval.cut-batch.waiting-not-cut',
      'agent.crash-points',
      'durable.verify.unknown-asks-a-person',
    ],
    says: 'schedule at MAX_TIME_MS',
    make: (store) =>
      withWakeups(store, {
        async schedule(logId, at) {
          if (at > 1e15 - 1) throw new Error('time out of range')
          return store.wakeups.schedule(logId, at)
        },
      }),
  },
  'wakeups of every namespace in one table': {
    fails: ['isolation.generated', 'wakeup.namespaces-isolated', 'sessions.list.namespace'],
    says: 'two namespaces alive at once',
    make: (store) => store,
    shared: 'wakeups',
  },

  // ---- namespaces -------------------------------------------------------------------
  'logs of every namespace in one table': {
    fails: [
      'isolation.generated',
      'log.namespaces-isolated',
      'sessions.list.namespace',
      'agent.crash-points',
      'durable.verify.crash-points',
      'durable.verify.unknown-asks-a-person',
      'durable.once.crash-points',
      'durable.undo.crash-points',
      'durable.undo.cancel-crash-points',
      'durable.undo.agent-cancel-crash-points',
    ],
    says: 'namespaces share data',
    make: (store) => store,
    shared: 'logs',
  },
  'leases of every namespace in one table': {
    fails: ['isolation.generated', 'lease.namespaces-isolated'],
    says: 'namespaces share leases',
    make: (store) => store,
    shared: 'leases',
  },

  // ---- messages ---------------------------------------------------------------------
  'append throws synchronously': {
    fails: [
      'content.limits-utf8',
      'log.append.stale',
      'log.append.stale-inside-batch',
      'log.append.future',
      'log.append.retry-landed',
      'log.atomic.refused-batch',
      'log.limits.record',
      'log.limits.batch',
      'log.append.big-batch',
      'log.append.next-seq',
      'log.atomic.refused-big-batch',
      'log.delete.large',
      'log.fence.current-lease',
      'log.namespaces-isolated',
      'durable.second-writer.conflict',
      'durable.session.deleted-while-asking',
      'lease.skew.beyond-bound',
      ...STALE_APPENDS_AFTER_DELETE,
      'stream.producer.dies',
      'stream.request',
    ],
    says: 'append threw synchronously; a store method must return a rejected promise',
    make: (store) => ({
      ...store,
      // Not async: a refusal escapes as a synchronous throw.
      append(logId, expectedSeq, records, options) {
        const log = store.data.logs.get(logId) ?? []
        prepareBatch(records, store.limits)
        if (records.length > 0 && log.length + 1 !== expectedSeq) throw new LogConflictError(logId, expectedSeq, log.length + 1)
        return store.append(logId, expectedSeq, records, options)
      },
    }),
  },

  // ---- liveness ---------------------------------------------------------------------
  'lists live holders as orphans': {
    fails: ['lease.orphans.live-holder', 'lease.orphans.dead-holder'],
    says: 'orphans() of another instance while the holder lives',
    make: (store, { data, clock }) =>
      withLeases(store, {
        // Every unexpired lease, as if no holder could be alive: a worker would take live sessions.
        orphans: async (limit) =>
          [...data.leases]
            .filter(([, lease]) => lease.expiresAt > clock.now())
            .map(([id]) => id)
            .slice(0, limit),
      }),
  },
  "lists a dead holder's lease but waits for its expiry": {
    fails: ['lease.orphans.dead-holder'],
    says: /driven by another host/,
    make: (store, { data, clock }) =>
      withLeases(store, {
        async acquire(logId, owner, ttlMs) {
          const current = data.leases.get(logId)
          if (current && current.expiresAt > clock.now() && current.owner !== owner) throw new LeaseHeldError(logId, current.expiresAt)
          return store.leases.acquire(logId, owner, ttlMs)
        },
      }),
  },

  // ---- fencing ----------------------------------------------------------------------
  'ignores the fence': {
    fails: [
      'log.fence.superseded',
      'log.fence.released',
      'log.fence.deleted',
      'log.fence.forged',
      'lease.orphans.dead-holder',
      'race.fenced-append-takeover',
    ],
    says: 'append with the superseded lease: expected an error with code LEASE_LOST',
    make: (store) => unfencedAppends(store),
  },
  'fences by fence number only, not owner': {
    fails: ['log.fence.forged'],
    says: 'another owner, same fence: expected an error with code LEASE_LOST',
    make: (store, { data }) => ({
      ...store,
      append: (logId, seq, records, options) => {
        const current = data.leases.get(logId)
        const lease = options?.lease
        return store.append(
          logId,
          seq,
          records,
          lease && current && lease.fence === current.fence ? { lease: { ...lease, owner: current.owner } } : options,
        )
      },
    }),
  },
  'a released lease still fences': {
    fails: ['log.fence.released'],
    says: 'append with a released lease: expected an error with code LEASE_LOST',
    make: (store, { data }) => {
      // Release marks the lease free instead of ending it: an append with it still lands.
      const released = new Map<string, { owner: string; fence: number; expiresAt: number }>()
      return {
        ...store,
        leases: {
          ...store.leases,
          async release(lease) {
            const row = data.leases.get(lease.logId)
            await store.leases.release(lease)
            if (row) released.set(lease.logId, row)
          },
          async acquire(logId, owner, ttlMs) {
            released.delete(logId)
            return store.leases.acquire(logId, owner, ttlMs)
          },
        },
        async append(logId, seq, records, options) {
          const row = released.get(logId)
          if (!options?.lease || data.leases.has(logId) || !row) return store.append(logId, seq, records, options)
          data.leases.set(logId, row)
          try {
            return await store.append(logId, seq, records, options)
          } finally {
            data.leases.delete(logId)
          }
        },
      }
    },
  },
  'fences start again at 1 after a delete': {
    fails: ['lease.fences.long-sequence', 'log.fence.deleted', 'lease.after-delete'],
    says: 'the lease after the delete has fence 1, not above 1',
    make: (store, { data }) => {
      // As if the fence counter were a column of the lease row that delete removes.
      const since = data as MemoryData & { restarted?: Map<string, number> }
      since.restarted ??= new Map()
      return {
        ...store,
        async delete(logId) {
          await store.delete(logId)
          since.restarted!.set(logId, 0)
        },
        leases: {
          ...store.leases,
          async acquire(logId, owner, ttlMs) {
            const lease = await store.leases.acquire(logId, owner, ttlMs)
            const count = since.restarted!.get(logId)
            if (count === undefined) return lease
            since.restarted!.set(logId, count + 1)
            data.leases.get(logId)!.fence = count + 1
            return { ...lease, fence: count + 1 }
          },
        },
      }
    },
  },
}

/** Conformance options for a store built by `make`, one memory data set per namespace. */
export function optionsFor(
  name: string,
  make: Breaker,
  overrides: Partial<ConformanceOptions> = {},
  shared?: SharedPart,
): ConformanceOptions {
  const databases = new Map<string, Omit<BreakerContext, 'clock' | 'namespace'> & { touched: Set<string> }>()
  const world = createMemoryData()
  const db = (namespace: string) => {
    let entry = databases.get(namespace)
    if (!entry) {
      const own = createMemoryData()
      const data: MemoryData = shared ? { ...own, [shared]: world[shared] } : own
      entry = { data, rejected: [], touched: new Set() }
      databases.set(namespace, entry)
    }
    return entry
  }
  return {
    name,
    createStore: ({ namespace, clock }: StoreContext) => {
      const entry = db(namespace)
      const store = make(memoryStore({ data: entry.data, clock }), { ...entry, clock, namespace })
      return shared ? touching(store, entry.touched) : store
    },
    dump: async ({ namespace }) => dumpMemoryData(db(namespace).data) + db(namespace).rejected.join('\n'),
    cleanup: async ({ namespace }) => {
      // A part shared by every namespace keeps what this namespace wrote until here.
      for (const id of databases.get(namespace)?.touched ?? []) world[shared!]?.delete(id)
      // And what a store keyed by namespace + id wrote there.
      for (const key of [...(world[shared!]?.keys() ?? [])]) if (key.startsWith(namespace)) world[shared!]?.delete(key)
      databases.delete(namespace)
    },
    ...overrides,
  }
}

/** Records every log id a store is called with, so cleanup can remove them from a shared part. */
function touching(store: HarnessStore, touched: Set<string>): HarnessStore {
  const note =
    <A extends unknown[], R>(fn: (logId: string, ...rest: A) => R) =>
    (logId: string, ...rest: A): R => {
      touched.add(logId)
      return fn(logId, ...rest)
    }
  return {
    ...store,
    append: note(store.append),
    leases: store.leases && { ...store.leases, acquire: note(store.leases.acquire) },
    wakeups: store.wakeups && { ...store.wakeups, schedule: note(store.wakeups.schedule) },
  }
}

export const correct: Breaker = (store) => store

export type { Lease, LogRecord }

// ---- round three: isolation, content, listings, races, the store's clock, the runtime's parameters
/** State a broken store keeps per data set (one per namespace), next to the memory data. */
function perData<T>(make: () => T): (data: MemoryData) => T {
  const kept = new WeakMap<MemoryData, T>()
  return (data) => {
    if (!kept.has(data)) kept.set(data, make())
    return kept.get(data)!
  }
}
const everListed = perData(() => new Set<string>())
const plainWakeups = perData(() => ({}) as Record<string, number>)
const firstNow = perData(() => ({ at: undefined as number | undefined }))
/** `\u` escapes for every character outside ASCII: the stored form of a JSON encoder set to ASCII only. */
const asciiEscaped = (text: string) => text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

const roundThree: Record<string, BrokenStore> = {
  'keys logs as namespace + id with no separator, and lists a namespace by prefix': {
    fails: ['isolation.generated'],
    says: /namespace/,
    shared: 'logs',
    make: (store, { data, namespace }) => {
      // data.logs is the one table of every namespace; leases and wakeups are the namespace's own.
      const key = (logId: string) => `${namespace}${logId}`
      return {
        ...store,
        async append(logId, expectedSeq, records, options) {
          const { batch, fenced } = checkAppend(store, data, logId, expectedSeq, records, options)
          if (batch.json.length === 0) return { nextSeq: expectedSeq }
          await tick()
          fenced()
          const log = data.logs.get(key(logId)) ?? []
          if (log.length + 1 !== expectedSeq) throw new LogConflictError(logId, expectedSeq, log.length + 1)
          log.push(...batch.json)
          data.logs.set(key(logId), log)
          return { nextSeq: log.length + 1 }
        },
        async read(logId, options = {}) {
          assertLogId(logId, store.limits)
          await tick()
          return readRows(data.logs.get(key(logId)) ?? [], options.after, options.limit)
        },
        async delete(logId) {
          assertLogId(logId, store.limits)
          await tick()
          data.logs.delete(key(logId))
          data.leases.delete(logId)
          data.wakeups.delete(logId)
        },
        sessions: {
          ...store.sessions,
          async list(options) {
            const { after, limit } = checkListSessionsOptions(options)
            await tick()
            const ids = [...data.logs]
              .filter(([k, log]) => k.startsWith(namespace) && log.length > 0)
              .map(([k]) => k.slice(namespace.length))
            return ids
              .filter((id) => after === undefined || compareCodePoints(id, after) > 0)
              .sort(compareCodePoints)
              .slice(0, limit)
          },
        },
      }
    },
  },
  'a delete also removes the logs under the id as a path (id/…)': {
    fails: ['isolation.path-ids'],
    says: /team-7|namespace/,
    make: (store, { data }) => ({
      ...store,
      async delete(logId) {
        await store.delete(logId)
        for (const key of [...data.logs.keys()]) if (key.startsWith(`${logId}/`)) data.logs.delete(key)
      },
    }),
  },
  'keeps wakeups in a plain object (an id of __proto__ or constructor is lost or found)': {
    fails: ['isolation.path-ids'],
    says: /wakeups/,
    make: (store, { data, clock }) => {
      const due = (limit: number) =>
        Object.entries(plainWakeups(data))
          .filter(([, at]) => at <= clock.now())
          .map(([logId, at]) => ({ logId, at }))
          .sort(compareWakeups)
          .slice(0, limit)
      const wakeups = withWakeups(store, {
        async schedule(logId, at) {
          await store.wakeups.schedule(logId, at)
          plainWakeups(data)[logId] = at
        },
        async cancel(logId) {
          await store.wakeups.cancel(logId)
          delete plainWakeups(data)[logId]
        },
        async due(limit) {
          await tick()
          return due(limit)
        },
        async claim(limit, holdMs) {
          await tick()
          const taken = due(limit)
          for (const w of taken) plainWakeups(data)[w.logId] = clock.now() + holdMs
          return taken
        },
      })
      return {
        ...wakeups,
        async delete(logId) {
          await store.delete(logId)
          delete plainWakeups(data)[logId]
        },
      }
    },
  },
  'stores records with their keys sorted (a JSON type that orders keys)': {
    fails: ['content.generated', 'content.multibyte-large', 'content.limits-utf8'],
    says: /key order|JSON text/,
    make: (store) => ({
      ...store,
      append: async (logId, seq, records, options) => {
        const sortKeys = (value: unknown): unknown =>
          Array.isArray(value)
            ? value.map(sortKeys)
            : value && typeof value === 'object'
              ? Object.fromEntries(
                  Object.entries(value)
                    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
                    .map(([k, v]) => [k, sortKeys(v)]),
                )
              : value
        return store.append(
          logId,
          seq,
          records.map((r) => sortKeys(r) as LogRecord),
          options,
        )
      },
    }),
  },
  'counts the record limit on its \\u-escaped stored form': {
    fails: ['content.multibyte-large', 'content.limits-utf8'],
    says: 'over the store',
    make: (store) => ({
      ...store,
      append: async (logId, seq, records, options) => {
        for (const record of records) {
          const stored = asciiEscaped(JSON.stringify(record))
          if (stored.length > store.limits.maxRecordBytes)
            throw new RecordTooLargeError('A record as stored', stored.length, store.limits.maxRecordBytes)
        }
        return store.append(logId, seq, records, options)
      },
    }),
  },
  'lists from index pages of 100 that hold deleted sessions, and returns what is left of a page': {
    fails: ['sessions.list.scale'],
    says: /empty page|lacks/,
    make: (store, { data }) => ({
      ...store,
      append: async (logId, seq, records, options) => {
        const result = await store.append(logId, seq, records, options)
        everListed(data).add(logId)
        return result
      },
      sessions: {
        ...store.sessions,
        async list(options) {
          const { after, limit } = checkListSessionsOptions(options)
          await tick()
          // The index keeps an entry per id ever written; a page scans 100 of them and drops the deleted.
          const scanned = [...everListed(data)]
            .filter((id) => after === undefined || compareCodePoints(id, after) > 0)
            .sort(compareCodePoints)
            .slice(0, 100)
          return scanned.filter((id) => (data.logs.get(id)?.length ?? 0) > 0).slice(0, limit)
        },
      },
    }),
  },
  'claim moves the due wakeups, then writes their holds again after a round trip': {
    fails: ['race.claim-cancel-delete'],
    says: 'a claim that raced a cancel',
    make: (store, { data, clock }) =>
      withWakeups(store, {
        async claim(limit, holdMs) {
          const taken = await store.wakeups.claim(limit, holdMs)
          await roundTrip()
          // A second statement that "confirms" the hold: it lands on whatever came in between.
          for (const w of taken) data.wakeups.set(w.logId, clock.now() + holdMs)
          return taken
        },
      }),
  },
  'renew reads the lease, then writes it back whole after a round trip': {
    fails: ['race.renew-release-takeover'],
    says: /renew/,
    make: (store, { data, clock }) =>
      withLeases(store, {
        async renew(lease, ttlMs) {
          const renewed = await store.leases.renew(lease, ttlMs)
          await roundTrip()
          data.leases.set(lease.logId, { owner: lease.owner, fence: lease.fence, expiresAt: clock.now() + ttlMs })
          return renewed
        },
      }),
  },
  'store.now() keeps the first time it read': {
    // With the store's clock kept by the crash wrapper, the durable sleeps wake by it too.
    fails: ['wait.sleep.parks-and-worker-wakes', 'wait.sleep.wake-time-kept-across-crash', 'wait.retry.parks-until-due', 'store.now.clock'],
    says: 'store.now() after the clock moved 1 ms',
    make: (store, { data }) => ({
      ...store,
      async now() {
        const kept = firstNow(data)
        kept.at ??= await store.now()
        return kept.at
      },
    }),
  },
  'refuses nothing but returns no entries for a read limit above 5000': {
    fails: ['log.read.runtime-pages'],
    says: 'a read of limit 8000',
    make: (store) => ({
      ...store,
      read: async (logId, options) => ((options?.limit ?? 0) > 5_000 ? await store.read(logId, { limit: 0 }) : store.read(logId, options)),
    }),
  },
  'fences kept in 7 bits': {
    fails: ['lease.fences.long-sequence'],
    says: 'fences grow without end',
    make: (store, { data }) =>
      withLeases(store, {
        async acquire(logId, owner, ttlMs) {
          const lease = await store.leases.acquire(logId, owner, ttlMs)
          const fence = ((lease.fence - 1) % 127) + 1
          data.leases.get(logId)!.fence = fence
          return { ...lease, fence }
        },
      }),
  },
  'claim(0) claims every due wakeup': {
    fails: ['store.limit-zero'],
    says: 'claim(0)',
    make: (store) => withWakeups(store, { claim: (limit, holdMs) => store.wakeups.claim(limit === 0 ? 1_000_000 : limit, holdMs) }),
  },
  'a second close() throws': {
    fails: ['store.close.twice'],
    says: 'the store is closed',
    make: (store) => {
      let closed = false
      return {
        ...store,
        async close() {
          if (closed) throw new Error('the store is closed')
          closed = true
          await store.close?.()
        },
      }
    },
  },
}
Object.assign(brokenStores, roundThree)
