import type { StreamChunk, UpsertableStreamDurability } from '@tanstack/ai'
import type { LockStore } from '@tanstack/ai/locks'
import { harnessLocks, harnessStreams, type StreamInit } from '@tanstack/ai-harness/streams'
import type { Clock, HarnessStore } from '@tanstack/ai-harness/store'

/** Streams of one store instance, as the `stream.*` cases use them. */
export interface StreamsUnderTest {
  durability(source: Request | StreamInit): UpsertableStreamDurability & { readonly runId?: string }
}

/** A lock store whose holders see their fence, as the `lock.*` cases use it. */
export interface LocksUnderTest extends LockStore {
  withLease<T>(key: string, fn: (held: { fence: number; signal: AbortSignal }) => Promise<T>): Promise<T>
}

/** What the hook gets: one store instance, the case's clock, and the settings of the case. */
export interface StreamsContext {
  readonly store: HarnessStore
  readonly clock: Clock
  /** Secrets the chunks must be stored without. */
  readonly secrets?: readonly string[]
  /** A closed stream's retention, in ms of `clock`. */
  readonly retainMs: number
}

export interface LocksContext {
  readonly store: HarnessStore
  readonly clock: Clock
  /** Lease time of a lock, in ms of `clock`. */
  readonly ttlMs: number
  /** Renewal period in ms of real time (a huge one: a holder that never renews, as a dead one). */
  readonly renewEveryMs: number
  /** How long a waiter tries a held lock before it gives up, in real ms: no case leaves a waiter behind for ever. */
  readonly waitMs: number
}

/**
 * How the `stream.*` and `lock.*` cases build streams and locks on a store: the core's
 * `harnessStreams` and `harnessLocks` by default. A store with native implementations
 * passes its own, and the suite's own tests pass broken ones.
 */
export interface StreamsHook {
  streams(context: StreamsContext): StreamsUnderTest
  locks(context: LocksContext): LocksUnderTest
}

/** The first-chunk deadline of the cases: short, so a join of a run that never produces fails fast. */
export const CASE_FIRST_CHUNK_MS = 300

export const defaultStreamsHook: StreamsHook = {
  streams: ({ store, clock, secrets, retainMs }) =>
    harnessStreams({ store, clock, secrets, retainMs, firstChunkDeadlineMs: CASE_FIRST_CHUNK_MS, pollMs: { min: 2, max: 20 } }),
  locks: ({ store, clock, ttlMs, renewEveryMs, waitMs }) =>
    harnessLocks({ store, clock, ttlMs, renewEveryMs, waitMs, retryMs: { min: 1, max: 10 } }),
}

/** A text chunk of message `m`, numbered, so order and duplicates show. */
export function textChunk(n: number, m = 'm1'): StreamChunk {
  return { type: 'TEXT_MESSAGE_CONTENT', messageId: m, delta: `d${n} `, timestamp: 1000 + n } as StreamChunk
}
