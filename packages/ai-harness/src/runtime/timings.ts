import { HarnessError } from '../contract/errors.js'
import { MAX_TIMER_MS } from '../store/option-checks.js'

/** How long a host waits for things, and how often it renews. */
export interface TimingOptions {
  /**
   * How long a lease lasts before another host may take the session over. Default: the
   * store's `leases.defaultLeaseMs` (DynamoDB and S3: 10 s), else 30 s. On a store that
   * proves a dead host dead (PostgreSQL, PGlite) a crash does not wait for it.
   */
  leaseMs?: number
  /**
   * The deadline of every store call the runtime makes (append, read, lease, wakeup).
   * A call that does not answer in time (a half-open connection) fails with
   * `STORE_UNAVAILABLE`, its outcome unknown. Default: 10 s, and at most a third of `leaseMs`.
   */
  storeTimeoutMs?: number
  /**
   * A session stops renewing its lease when one of its store calls has waited longer than
   * this (no progress: a hung connection, a frozen process), so another host takes it over.
   * Default: half of `leaseMs`.
   */
  stallAfterMs?: number
  /**
   * How long `close()`, `cancel()`, `handOff()` and `host.shutdown()` wait for a step
   * function in flight before they go on without it (its outcome unknown: the idempotency
   * key is for that). Default 10 s.
   */
  stopTimeoutMs?: number
}

export type RuntimeTimings = Required<TimingOptions> & { readonly renewEveryMs: number }

export const DEFAULT_LEASE_MS = 30_000
const DEFAULT_STORE_TIMEOUT_MS = 10_000
const DEFAULT_STOP_TIMEOUT_MS = 10_000

/** The timings of a host, with the defaults filled in; INVALID_ARGUMENT for a value that is not a positive number of ms. */
export function resolveTimings(options: TimingOptions): RuntimeTimings {
  const leaseMs = positive('leaseMs', options.leaseMs) ?? DEFAULT_LEASE_MS
  return {
    leaseMs,
    storeTimeoutMs: positive('storeTimeoutMs', options.storeTimeoutMs) ?? Math.min(DEFAULT_STORE_TIMEOUT_MS, Math.ceil(leaseMs / 3)),
    stallAfterMs: positive('stallAfterMs', options.stallAfterMs) ?? Math.ceil(leaseMs / 2),
    stopTimeoutMs: positive('stopTimeoutMs', options.stopTimeoutMs) ?? DEFAULT_STOP_TIMEOUT_MS,
    renewEveryMs: Math.max(250, Math.floor(leaseMs / 3)),
  }
}

function positive(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || Number.isNaN(value) || value <= 0 || (name === 'leaseMs' && !Number.isFinite(value))) {
    throw new HarnessError('INVALID_ARGUMENT', `${name} must be a positive number of milliseconds, not ${String(value)}.`)
  }
  return value
}

/** Calls `fn` after `ms`, unless `ms` is too long for a timer to mean anything (then never). Returns the cancel. */
export function after(ms: number, fn: () => void): () => void {
  if (!(ms <= MAX_TIMER_MS)) return () => {}
  const timer = setTimeout(fn, ms)
  return () => clearTimeout(timer)
}
