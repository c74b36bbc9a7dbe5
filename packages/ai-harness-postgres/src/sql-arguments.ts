/**
 * The core's checks of lease and wakeup arguments (`@tanstack/ai-harness/store`, the same
 * on every store), with what PostgreSQL needs of the values: whole ms for its bigint
 * columns, and NULL for "no limit".
 */
import { checkCount, checkDuration, checkTime } from '@tanstack/ai-harness/store'

/** A checked time, rounded up: a wakeup is "no earlier than at". */
export const wholeTime = (value: unknown, what: string): number => Math.ceil(checkTime(value, what))

/** A checked duration, rounded up: a lease or a claim holds at least as long as asked. */
export const wholeDuration = (value: unknown, what: string): number => Math.ceil(checkDuration(value, what))

/** A checked count for SQL's LIMIT: Infinity (no limit) is NULL. */
export function sqlLimit(value: unknown, what: string): number | null {
  const count = checkCount(value, what)
  return count === Number.POSITIVE_INFINITY ? null : count
}
