import { HarnessError } from './errors.js'
import type { ListSessionsOptions } from './types.js'

/** The page size of a session listing when the caller gives none. */
export const DEFAULT_SESSION_PAGE = 100
/** The largest page a caller may ask for; stores may cut pages shorter still. */
export const MAX_SESSION_PAGE = 1000

/**
 * Checks the options of `sessions.list` / `sessions.waiting` the same way in every store:
 * `after` is a string (any, not only an existing id), `limit` a whole number from 1 to
 * {@link MAX_SESSION_PAGE}. Throws `INVALID_ARGUMENT` saying what is accepted.
 */
export function checkListSessionsOptions(options: ListSessionsOptions | undefined): { after: string | undefined; limit: number } {
  if (options === undefined) return { after: undefined, limit: DEFAULT_SESSION_PAGE }
  if (typeof options !== 'object' || options === null) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `The options of a session listing are an object like { after: 'last-id', limit: 50 }, not ${String(options)}.`,
    )
  }
  const { after, limit = DEFAULT_SESSION_PAGE } = options
  if (after !== undefined && typeof after !== 'string') {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `A session listing's after is the last id of the previous page (a string), not ${String(after)}.`,
    )
  }
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SESSION_PAGE) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `A session listing's limit is a whole number from 1 to ${MAX_SESSION_PAGE}, not ${String(limit)}.`,
    )
  }
  return { after, limit }
}

/**
 * Compares two ids by code point, which is UTF-8 byte order, PostgreSQL's `COLLATE "C"`
 * and S3's key listing: the order of every session listing and of wakeups due at one
 * time. (JavaScript's `<` compares UTF-16 units, which puts U+E000–U+FFFF after the
 * astral characters.)
 */
export function compareCodePoints(a: string, b: string): number {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(j)!
    if (x !== y) return x - y
    i += x > 0xffff ? 2 : 1
    j += y > 0xffff ? 2 : 1
  }
  return a.length - b.length
}
