/** Settings the `stream.*` and `lock.*` cases share with the racer processes that run their other side. */

/** A closed stream's retention in the cases, in ms of the case's clock. */
export const RETAIN_MS = 60_000
/** The locks of the cases: a 10 s lease of the case's clock, no renewal unless a case asks, a waiter gives up after 40 s (a file store's racer processes under load take long; lock.exclusive waits 45 s). */
export const RACER_LOCK_SETTINGS = { ttlMs: 10_000, renewEveryMs: 2_000_000_000, waitMs: 40_000 } as const
/** Where the cases' `Request`s point. */
export const SSE_URL_BASE = 'http://harness.test/chat'
