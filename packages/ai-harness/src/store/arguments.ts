/**
 * The checks every store runs on the arguments of its lease and wakeup calls, so every
 * store refuses the same inputs, each with `INVALID_ARGUMENT` saying what the call
 * accepts. A store checks before it talks to its database: a bad argument never costs a
 * request, and never reaches the database as a value it stores.
 */
import { HarnessError } from '../contract/errors.js'
import { assertLogId } from '../contract/prepare-batch.js'
import { type Lease, MAX_TIME_MS, type StoreLimits } from '../contract/types.js'

const refuse = (message: string): never => {
  throw new HarnessError('INVALID_ARGUMENT', message)
}

/** A time in ms since the epoch within [0, MAX_TIME_MS] (a wakeup's time); returned as given, fractions too. */
export function checkTime(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIME_MS) {
    refuse(`${what} must be a time in ms since the epoch between 0 and ${MAX_TIME_MS} (MAX_TIME_MS), not ${String(value)}.`)
  }
  return value as number
}

/** A duration in ms within [0, MAX_TIME_MS] (a claim's hold); returned as given. */
export function checkDuration(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIME_MS) {
    refuse(`${what} must be a number of ms between 0 and ${MAX_TIME_MS}, not ${String(value)}.`)
  }
  return value as number
}

/** A lease's ttl: more than 0 ms (a lease of 0 ms would be expired when it arrives), at most MAX_TIME_MS. */
export function checkLeaseTtl(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIME_MS) {
    refuse(`A lease ttl must be a number of ms above 0 and at most ${MAX_TIME_MS}, not ${String(value)}.`)
  }
  return value as number
}

/**
 * The expiry of a lease taken or renewed at `now` for `ttlMs` (checked with
 * {@link checkLeaseTtl}), refused past MAX_TIME_MS: for a store that computes the expiry
 * itself (DynamoDB, S3). The memory and PostgreSQL stores cut it to MAX_TIME_MS instead
 * ({@link timeAfter}); their tests and those of DynamoDB and S3 pin each way.
 */
export function leaseExpiry(now: number, ttlMs: unknown): number {
  const expiresAt = now + checkLeaseTtl(ttlMs)
  if (!(now >= 0 && expiresAt <= MAX_TIME_MS)) {
    refuse(
      `A lease would expire at ${expiresAt} ms, outside the times a store keeps (0 to MAX_TIME_MS, ${MAX_TIME_MS}). Use a shorter ttl, or check the clock.`,
    )
  }
  return expiresAt
}

/** A count of wanted items >= 0 (a read's or `due`'s limit), rounded down; Infinity stays: no limit. */
export function checkCount(value: unknown, what: string): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) refuse(`${what} must be a number >= 0, not ${String(value)}.`)
  return Math.floor(value as number)
}

/** A lease owner: a non-empty string without NUL (the host id; no database text keeps NUL). */
export function checkOwner(owner: unknown): string {
  if (typeof owner !== 'string' || owner.length === 0 || owner.includes('\u0000')) {
    refuse(`A lease owner must be a non-empty string without NUL (the host id), not ${JSON.stringify(owner) ?? String(owner)}.`)
  }
  return owner as string
}

/** A lease as `acquire` returned it: its session id, owner and fence are checked. */
export function checkLease(lease: unknown, limits: StoreLimits, what = 'lease'): Lease {
  if (typeof lease !== 'object' || lease === null) refuse(`The ${what} must be the object acquire() returned, not ${String(lease)}.`)
  const { logId, owner, fence } = lease as Lease
  assertLogId(logId, limits)
  checkOwner(owner)
  if (typeof fence !== 'number' || !Number.isSafeInteger(fence) || fence < 1) {
    refuse(`The ${what}'s fence must be the whole number >= 1 that acquire() returned, not ${String(fence)}.`)
  }
  return lease as Lease
}

/** `now + duration`, kept within the times every store keeps: the end of a claim's hold, a memory lease's expiry. */
export const timeAfter = (now: number, duration: number): number => Math.min(now + duration, MAX_TIME_MS)
