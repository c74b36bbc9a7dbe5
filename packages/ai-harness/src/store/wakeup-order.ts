import { compareCodePoints } from '../contract/list-sessions.js'
import type { Wakeup } from '../contract/types.js'

/**
 * The order `due` and `claim` return wakeups in, on every store: earliest first, ties
 * by session id in code point order, so workers on any store see the same sequence.
 */
export const compareWakeups = (a: Wakeup, b: Wakeup): number => a.at - b.at || compareCodePoints(a.logId, b.logId)
