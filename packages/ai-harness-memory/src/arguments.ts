/**
 * Checks of the arguments of the lease and wakeup calls: each refusal is
 * `INVALID_ARGUMENT` saying what the call accepts. The same rules as the PostgreSQL store.
 */
import { assertLogId, HarnessError, type Lease, MAX_TIME_MS, type StoreLimits } from '@tanstack/ai-harness/store'

const refuse = (message: string): never => {
  throw new HarnessError('INVALID_ARGUMENT', message)
}

/** A time in ms since the epoch within [0, MAX_TIME_MS]; kept as given (fractions too). */
export function checkTime(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIME_MS) {
    refuse(`${what} must be a time in ms since the epoch between 0 and ${MAX_TIME_MS} (MAX_TIME_MS), not ${String(value)}.`)
  }
  return value as number
}

/** A duration in ms within [0, MAX_TIME_MS]. */
export function checkDuration(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIME_MS) {
    refuse(`${what} must be a number of ms between 0 and ${MAX_TIME_MS}, not ${String(value)}.`)
  }
  return value as number
}

/** A count limit >= 0, rounded down (Infinity: no limit). */
export function checkLimit(value: unknown, what: string): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) refuse(`${what} must be a number >= 0, not ${String(value)}.`)
  return Math.floor(value as number)
}

/** A lease owner: a non-empty string without NUL. */
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

/** `now + duration`, kept within the range every store accepts. */
export const later = (now: number, duration: number) => Math.min(now + duration, MAX_TIME_MS)
