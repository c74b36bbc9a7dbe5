import type { Wakeup } from '../contract/types.js'

/**
 * Ids in code point order, which is UTF-8 byte order: the order of PostgreSQL's
 * `COLLATE "C"` and of S3's key listing. JavaScript's `<` compares UTF-16 units, which
 * puts U+E000–U+FFFF after every astral character.
 */
export function byCodePoint(a: string, b: string): number {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(j)!
    if (x !== y) return x - y
    i += x > 0xffff ? 2 : 1
    j += y > 0xffff ? 2 : 1
  }
  return a.length - b.length
}

/**
 * The order `due` and `claim` return wakeups in, on every store: earliest first, ties
 * by session id in code point order, so workers on any store see the same sequence.
 */
export const compareWakeups = (a: Wakeup, b: Wakeup): number => a.at - b.at || byCodePoint(a.logId, b.logId)
