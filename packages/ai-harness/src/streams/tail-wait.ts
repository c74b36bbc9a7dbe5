import type { HarnessStore } from '../contract/types.js'

/**
 * How a tailing reader learns of new entries: writers through this module in the same
 * process wake it at once; a writer in another process is found by polling the store,
 * backing off from `minMs` to `maxMs` while nothing comes.
 */
const waiters = new WeakMap<HarnessStore, Map<string, Set<() => void>>>()

/** Wakes every reader of `logId` on `store` in this process. */
export function wakeReaders(store: HarnessStore, logId: string): void {
  const set = waiters.get(store)?.get(logId)
  if (!set) return
  for (const wake of [...set]) wake()
}

/** Resolves on a wake-up of `logId`, after `ms`, or when `signal` aborts, whichever comes first. */
export function waitForMore(store: HarnessStore, logId: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const logs = waiters.get(store) ?? new Map<string, Set<() => void>>()
    waiters.set(store, logs)
    const set = logs.get(logId) ?? new Set<() => void>()
    logs.set(logId, set)
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      set.delete(done)
      if (set.size === 0 && logs.get(logId) === set) logs.delete(logId)
      resolve()
    }
    const timer = setTimeout(done, ms)
    set.add(done)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/** The poll delays of one reader: `minMs`, doubling to `maxMs`, back to `minMs` on news. */
export class Backoff {
  #ms: number
  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {
    this.#ms = minMs
  }
  next(): number {
    const ms = this.#ms
    this.#ms = Math.min(this.maxMs, this.#ms * 2)
    return ms
  }
  reset(): void {
    this.#ms = this.minMs
  }
}
