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

export interface ReadOptions {
  /** Return entries with `seq > after`. Default 0 (from the start). */
  after?: number
  /** At most this many entries. Default: all of them. */
  limit?: number
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
}

/** Milliseconds since the epoch. Injected so tests of leases and wakeups never sleep. */
export interface Clock {
  now(): number
}

/** The right to drive a session until `expiresAt`. */
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
 * - `acquire` succeeds when nobody holds a live lease (or the caller itself does) and
 *   returns a lease with a strictly greater fence than any earlier lease of that
 *   session; it throws `LEASE_HELD` at once when another owner holds a live lease.
 * - `renew` extends the caller's lease; it throws `LEASE_LOST` when the lease expired
 *   or a newer lease exists.
 * - `release` frees the caller's lease; it throws `LEASE_LOST` when the lease is not
 *   the current one, so a stale owner can never free its successor's lease.
 */
export interface LeaseStore {
  acquire(logId: string, owner: string, ttlMs: number): Promise<Lease>
  renew(lease: Lease, ttlMs: number): Promise<Lease>
  release(lease: Lease): Promise<void>
}

/** A session that someone must look at, no earlier than `at`. */
export interface Wakeup {
  readonly logId: string
  readonly at: number
}

/**
 * When someone must next look at a session. One wakeup per session.
 *
 * - `schedule` sets (inserts or replaces) the session's wakeup.
 * - `cancel` removes it; cancelling a missing wakeup is fine.
 * - `due` lists wakeups with `at <= now`, oldest first, at most `limit`; it changes nothing.
 * - `claim` takes up to `limit` due wakeups, oldest first, and moves each one to
 *   `now + holdMs`, atomically: two workers claiming at once never get the same
 *   wakeup. A worker that dies after a claim sees the wakeup come back after `holdMs`.
 */
export interface WakeupStore {
  schedule(logId: string, at: number): Promise<void>
  cancel(logId: string): Promise<void>
  due(limit: number): Promise<Wakeup[]>
  claim(limit: number, holdMs: number): Promise<Wakeup[]>
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
   * conflict. An empty batch writes nothing and does not check the seq.
   */
  append(logId: string, expectedSeq: number, records: readonly LogRecord[]): Promise<AppendResult>
  /** Entries with `seq > after`, ascending, at most `limit`. Sees every resolved append. */
  read(logId: string, options?: ReadOptions): Promise<LogEntry[]>
  /** Removes the session's log, lease and wakeup, and nothing else. Idempotent. */
  delete(logId: string): Promise<void>
  readonly leases?: LeaseStore
  readonly wakeups?: WakeupStore
  /** Frees connections the store opened itself. */
  close?(): Promise<void>
}
