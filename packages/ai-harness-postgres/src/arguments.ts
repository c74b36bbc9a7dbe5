/**
 * Checks of the arguments of the lease and wakeup calls, before any SQL: each refusal
 * is `INVALID_ARGUMENT` saying what the call accepts.
 */
import { assertLogId, HarnessError, type Lease, MAX_TIME_MS, type StoreLimits } from '@tanstack/ai-harness/store'

const refuse = (message: string): never => {
  throw new HarnessError('INVALID_ARGUMENT', message)
}

/** A time in ms since the epoch within [0, MAX_TIME_MS], rounded up: a wakeup is "no earlier than". */
export function checkTime(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIME_MS) {
    refuse(`${what} must be a time in ms since the epoch between 0 and ${MAX_TIME_MS} (MAX_TIME_MS), not ${String(value)}.`)
  }
  return Math.ceil(value as number)
}

/** A duration in ms within [0, MAX_TIME_MS], rounded up. */
export function checkDuration(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIME_MS) {
    refuse(`${what} must be a number of ms between 0 and ${MAX_TIME_MS}, not ${String(value)}.`)
  }
  return Math.ceil(value as number)
}

/** A count limit >= 0, rounded down; Infinity means no limit (null). */
export function checkLimit(value: unknown, what: string): number | null {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) refuse(`${what} must be a number >= 0, not ${String(value)}.`)
  return value === Number.POSITIVE_INFINITY ? null : Math.floor(value as number)
}

/** A lease owner: a non-empty string without NUL (PostgreSQL text cannot hold NUL). */
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
