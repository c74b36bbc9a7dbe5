import type { Clock } from './types.js'

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() }

/** A clock that moves only when told to: for tests of leases, sleeps and wakeups. */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms`. */
  advance(ms: number): void
  /** Sets the time. */
  set(ms: number): void
}

export function createManualClock(start = Date.UTC(2026, 0, 1)): ManualClock {
  let now = start
  return {
    now: () => now,
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError('A manual clock only moves forward; pass ms >= 0.')
      now += ms
    },
    set(ms) {
      now = ms
    },
  }
}
