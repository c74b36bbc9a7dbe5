import type { JsonObject } from '../json/json-types.js'

/**
 * A record in a session log: a JSON object with a string `type`.
 * Types that begin with `harness.` belong to the harness; apps use their own prefix.
 */
export type LogRecord = JsonObject & { type: string }

/** One stored record and its position. `seq` is dense and starts at 1. */
export interface LogEntry<R extends LogRecord = LogRecord> {
  readonly seq: number
  readonly record: R
}

/** What `append` tells the writer once the batch has landed. */
export interface AppendResult {
  /** The seq the next append must expect: `expectedSeq + records.length`. */
  readonly nextSeq: number
}

/**
 * Options of `read`.
 *
 * **The paging rule.** A page holds the entries `after + 1, after + 2, …` in order, with
 * no gap, and at most `limit` of them. A store may return fewer than `limit` (a page cut
 * at its own batch or byte size), but it returns at least one entry whenever the log
 * holds an entry after `after`: **only an empty page means the end of the log.** Readers
 * (the harness's `readAll` and its session fold) page on until they get an empty page.
 */
export interface ReadOptions {
  /** Return entries with `seq > after`. Default 0 (from the start). */
  after?: number
  /** At most this many entries (0 returns none). Default: no limit, but the store may still page. */
  limit?: number
}

/** Options of `append`. */
export interface AppendOptions {
  /**
   * The lease of the writer. A store that fences appends refuses the append with
   * `LEASE_LOST`, writing nothing, unless this is the session's current lease (same
   * owner and fence, still held: not released, not superseded by a newer lease, and
   * not ended by `delete`). It checks this in the same atomic step as the seq. A store
   * that cannot check it atomically ignores it, and its conformance run declares
   * `skip: { fencing: 'why' }`. Expiry is not checked here: an expired lease that
   * nobody took over still writes safely, because the seq check guards the log.
   */
  readonly lease?: Lease
}

/**
 * Sizes a store accepts, in bytes of UTF-8 JSON (`JSON.stringify` of the record).
 * A batch's size is the sum of its records' sizes.
 */
export interface StoreLimits {
  readonly maxRecordBytes: number
  readonly maxBatchBytes: number
  /** Largest number of records in one append, if the store has such a limit. */
  readonly maxBatchRecords?: number
  /**
   * Longest log id, in bytes of UTF-8, that the store keeps exactly. Default
   * {@link DEFAULT_MAX_LOG_ID_BYTES}. Declare what your keys really hold (after any
   * escaping the store does); the core refuses longer ids with `INVALID_ARGUMENT`
   * before the store sees them, and the conformance suite checks ids up to it.
   */
  readonly maxLogIdBytes?: number
}

/** The longest log id a store keeps when it declares no `maxLogIdBytes`. */
export const DEFAULT_MAX_LOG_ID_BYTES = 512

/**
 * The latest time the harness writes (a wake time, a lease expiry): the largest time a
 * JavaScript `Date` can hold, in ms since the epoch. Every store must accept times in
 * `[0, MAX_TIME_MS]`; the harness refuses a sleep that would wake later, before it writes.
 */
export const MAX_TIME_MS = 8_640_000_000_000_000

/** Milliseconds since the epoch. Injected so tests of leases and wakeups never sleep. */
export interface Clock {
  now(): number
}

/**
 * The right to drive a session until `expiresAt`. A lease is live while
 * `now < expiresAt`; at `now == expiresAt` it has expired and another owner may take it.
 */
export interface Lease {
  readonly logId: string
  readonly owner: string
  /** Strictly greater for every new lease of the same session. */
  readonly fence: number
  readonly expiresAt: number
}

/**
 * Which host drives a session now.
 *
 * - `acquire` succeeds when nobody holds a live lease (or the same owner does, or the
 *   holder is provably dead, on a store with {@link LeaseStore.orphans}) and
 *   returns a lease with a strictly greater fence than any earlier lease of that
 *   session, also across `delete`; it throws `LEASE_HELD` at once when another owner
 *   holds a live lease. Owners are compared as exact strings: the harness makes each
 *   process's owner unique, so two processes never share one.
 * - `renew` extends the caller's live lease to `now + ttlMs`, keeping its fence; it
 *   throws `LEASE_LOST` when the lease expired (even if nobody took it since), was
 *   released, or a newer lease exists.
 * - `release` frees the caller's lease; it throws `LEASE_LOST` when the lease is not
 *   the current one, so a stale owner can never free its successor's lease.
 */
export interface LeaseStore {
  acquire(logId: string, owner: string, ttlMs: number): Promise<Lease>
  renew(lease: Lease, ttlMs: number): Promise<Lease>
  release(lease: Lease): Promise<void>
  /**
   * Optional: **liveness.** Sessions whose lease is still unexpired but held by a holder
   * the store can prove dead, at most `limit` of them, in code point order. It changes
   * nothing. A store that has it records, with each lease, its holder: the store
   * instance that took it. A holder dies when its process ends, when it loses what
   * proves it alive (the PostgreSQL store's liveness connection), or when its `close()`
   * is called; a holder that is only slow or unreachable is not dead.
   *
   * A store with `orphans` also lets `acquire` take such a lease at once, with a greater
   * fence, as after expiry; the new fence makes the dead holder's fenced appends, renews
   * and releases fail with `LEASE_LOST`, so a holder wrongly thought dead still writes
   * nothing. A worker calls it on every poll to resume those sessions without waiting
   * for their leases to expire. Never list a lease whose holder may be alive: the
   * conformance cases `lease.orphans.*` check both sides. Without it, leases end only by
   * expiry or release, as before.
   */
  orphans?(limit: number): Promise<string[]>
  /**
   * Optional: the lease length the store suggests when the host sets no `leaseMs`, in
   * ms: how soon a dead host's sessions come back on a store that can only wait for
   * expiry. Default (absent): the host's 30 s.
   */
  readonly defaultLeaseMs?: number
}

/** A session that someone must look at, no earlier than `at`. */
export interface Wakeup {
  readonly logId: string
  readonly at: number
}

/**
 * When someone must next look at a session. One wakeup per session.
 *
 * - `schedule` sets (inserts or replaces) the session's wakeup; it also clears a claim's hold.
 * - `cancel` removes exactly that session's wakeup; cancelling a missing wakeup is fine.
 * - `due` lists wakeups with `at <= now`, oldest first, at most `limit`; it changes nothing.
 * - `claim` takes up to `limit` due wakeups, oldest first, and moves each one to
 *   `now + holdMs`, atomically: two workers claiming at once never get the same
 *   wakeup. Each claimed wakeup reports the time it was due (its `at` before the
 *   claim). A worker that dies after a claim sees the wakeup come back after `holdMs`.
 *
 * Times are ms since the epoch and may have fractions; a store keeps them to the ms
 * or better and never reports a wakeup before its time.
 */
export interface WakeupStore {
  schedule(logId: string, at: number): Promise<void>
  cancel(logId: string): Promise<void>
  due(limit: number): Promise<Wakeup[]>
  claim(limit: number, holdMs: number): Promise<Wakeup[]>
  /**
   * Optional: **notifications.** Calls `listener` soon after any instance of the store, in
   * any process, schedules a wakeup that is due at once (`at <= now`: a hand-off for a
   * deploy, an answer, a submitted prompt), so a started worker claims it then instead of
   * at its next poll. Resolves once it listens, with the function that stops it. Best
   * effort: a call may come late, twice, or for a wakeup another worker claimed first, and
   * a missed one only leaves the wakeup to the next poll. The conformance case
   * `wakeup.watch` checks it; a store without it declares `skip: { watch: 'why' }`.
   */
  watch?(listener: () => void): Promise<() => Promise<void>>
}

/**
 * The wakeup time of a session that waits for a person (a question, an approval): the
 * end of the time range, so no worker ever finds it due. The runtime schedules it when a
 * turn parks on a person, and the answer replaces it with a wakeup due at once; so
 * "sessions waiting for a person" is visible to a store as "wakeup at `WAITING_FOR_PERSON`",
 * and {@link SessionListStore.waiting} can list them from the store's wakeup index.
 */
export const WAITING_FOR_PERSON = MAX_TIME_MS

/**
 * Options of {@link SessionListStore.list} and {@link SessionListStore.waiting}.
 *
 * **The paging rule** is the log's: a page holds ids strictly after `after`, in order,
 * at most `limit` of them; a store may return fewer, but **only an empty page means the end.**
 */
export interface ListSessionsOptions {
  /** Return ids strictly after this one, in code point order. Default: from the first id. */
  after?: string
  /** At most this many ids. Default 100; a store may cut a page shorter. */
  limit?: number
}

/**
 * Which sessions a store holds, for the people who look after them (an inspector page,
 * an admin route). Optional: without it the harness still runs, but nobody can list.
 *
 * Ids come in **code point order** (UTF-8 byte order, PostgreSQL's `COLLATE "C"`), each
 * once, paged with `after` = the last id of the previous page. A store serves a page
 * from an index (never a scan of every session). **A listing may lag behind writes**
 * where the store's index does (a DynamoDB global secondary index): for a moment after
 * an append or a delete resolved, a listing may miss the new session or still show the
 * deleted one. It never lists an id twice, out of order, or one that never had a record,
 * and it settles once the writes stop (the conformance suite waits up to 10 s). A page of
 * the index that held only deleted entries is not an empty page: only an empty page ends.
 *
 * - `list` lists sessions whose log holds at least one record. A deleted log is gone
 *   from it; a new log of the same id is listed again.
 * - `waiting` lists sessions whose wakeup is at {@link WAITING_FOR_PERSON}: those that
 *   wait for a person's answer or approval. It changes nothing.
 */
export interface SessionListStore {
  list(options?: ListSessionsOptions): Promise<string[]>
  waiting(options?: ListSessionsOptions): Promise<string[]>
}

/**
 * The storage contract of the harness. A store gives an append-only log per session,
 * and optionally leases and wakeups (without them, one host drives each session and
 * there are no workers). The conformance suite (`@tanstack/ai-harness-conformance`)
 * is the executable definition of every guarantee below.
 */
export interface HarnessStore {
  /** Sizes the store accepts; an append over them fails with `RECORD_TOO_LARGE` before writing. */
  readonly limits: StoreLimits
  /**
   * Appends all of `records` or none of them, at seqs `expectedSeq, expectedSeq+1, …`.
   * If the log's next free seq is not `expectedSeq`, throws `LogConflictError`
   * (`LOG_CONFLICT`) and writes nothing. A retried append of a batch that landed is a
   * conflict. An empty batch writes nothing and does not check the seq. The store
   * keeps a copy: a caller that changes its objects afterwards changes nothing stored.
   * With `options.lease`, a fencing store also refuses a superseded writer (see
   * {@link AppendOptions}).
   */
  append(logId: string, expectedSeq: number, records: readonly LogRecord[], options?: AppendOptions): Promise<AppendResult>
  /**
   * Entries with `seq > after`, ascending and dense, at most `limit`; see
   * {@link ReadOptions} for the paging rule. Sees every resolved append. Each call
   * returns fresh objects that the caller may change.
   */
  read(logId: string, options?: ReadOptions): Promise<LogEntry[]>
  /**
   * Removes the session's log, lease and wakeup, and nothing else (a look-alike id is
   * untouched). Idempotent. Once it resolves the session is gone for good: its next
   * free seq is 1 again, so any append that expects a later seq (a writer that still
   * holds the old log) conflicts and writes nothing, from every instance; a lease taken
   * afterwards has a greater fence than every lease before; a new log with the same id
   * starts clean at seq 1.
   */
  delete(logId: string): Promise<void>
  readonly leases?: LeaseStore
  readonly wakeups?: WakeupStore
  /** Lists sessions (all, and those waiting for a person); see {@link SessionListStore}. */
  readonly sessions?: SessionListStore
  /**
   * The store's own clock, in ms since the epoch, where it has one (PostgreSQL's
   * `now()`). When present, the harness takes durable times from it (the wake time of a
   * sleep), so they do not depend on the clock of the host that wrote them. A store with
   * an injected clock (tests) returns that clock's time.
   */
  now?(): Promise<number>
  /** Frees connections the store opened itself. */
  close?(): Promise<void>
}
