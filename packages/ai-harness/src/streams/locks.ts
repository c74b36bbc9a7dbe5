import { randomUUID } from 'node:crypto'
import type { LockStore } from '@tanstack/ai/locks'
import { HarnessError, isHarnessError, LeaseLostError } from '../contract/errors.js'
import type { Clock, HarnessStore, Lease } from '../contract/types.js'
import { MAX_TIMER_MS } from '../store/option-checks.js'
import { lockLogId } from './options.js'

/** Options of {@link harnessLocks}. */
export interface HarnessLocksOptions {
  /** A store with `leases`: each lock is a lease of the store, under a key of its own. */
  readonly store: HarnessStore
  /** The clock the store's leases run on (the same one you gave the store). Default: the wall clock. */
  readonly clock?: Clock
  /** How long a holder keeps the lock without renewing it, in ms: a holder that dies frees it after this. Default 30 000. */
  readonly ttlMs?: number
  /** How often a holder renews, in ms of real time. Default a third of `ttlMs`. */
  readonly renewEveryMs?: number
  /** The first and the longest wait between two tries of a held lock, in ms. Default 10 and 500. */
  readonly retryMs?: { readonly min?: number; readonly max?: number }
  /** Give up waiting for a held lock after this many ms with `LEASE_HELD`. Default: wait as long as it takes. */
  readonly waitMs?: number
}

/** A lock while it is held: its lease (with the fence), and the signal that aborts when it is lost. */
export interface HeldLock {
  readonly key: string
  /** Strictly greater for every holder of the same key: pass it to whatever you write under the lock. */
  readonly fence: number
  readonly lease: Lease
  /** Aborts (with a `LEASE_LOST` reason) as soon as the lock can no longer be guaranteed. */
  readonly signal: AbortSignal
}

/** TanStack AI's `LockStore` on a harness store's leases, and the same lock with its fence. */
export interface HarnessLocks extends LockStore {
  /** Runs `fn` while holding the lock of `key`, with its lease and fence. */
  withLease<T>(key: string, fn: (held: HeldLock) => Promise<T>): Promise<T>
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * A distributed `LockStore` for `withLocks(...)`: each `withLock` takes a lease of the
 * store (its own owner, so two calls of one process exclude each other too), renews it
 * while `fn` runs, and releases it after. A holder that dies stops renewing and the lock
 * frees itself `ttlMs` later; a holder whose lease is lost (expired, taken) sees `signal`
 * abort. Locks live under `harness.lock/<key>` in the store, beside its sessions.
 */
export function harnessLocks(options: HarnessLocksOptions): HarnessLocks {
  const { store } = options
  const leases = store.leases
  if (!leases) {
    throw new HarnessError(
      'CAPABILITY_MISSING',
      'harnessLocks needs a store with leases; this store has none. Use a store that has them (memory, PostgreSQL, DynamoDB, S3).',
    )
  }
  const clock = options.clock ?? { now: () => Date.now() }
  const ttlMs = options.ttlMs ?? 30_000
  // A timer longer than Node's longest fires at once: a longer period means "never", so it is cut to the longest.
  const renewEveryMs = Math.min(MAX_TIMER_MS, options.renewEveryMs ?? Math.max(1, Math.floor(ttlMs / 3)))
  const retryMin = options.retryMs?.min ?? 10
  const retryMax = options.retryMs?.max ?? 500

  async function acquire(key: string, owner: string): Promise<Lease> {
    const started = performance.now()
    for (let wait = retryMin; ; wait = Math.min(retryMax, wait * 2)) {
      try {
        return await leases!.acquire(lockLogId(key), owner, ttlMs)
      } catch (error) {
        if (!isHarnessError(error, 'LEASE_HELD')) throw error
        if (options.waitMs !== undefined && performance.now() - started + wait > options.waitMs) throw error
      }
      await sleep(wait)
    }
  }

  /** Renews `lease` every `renewEveryMs` until `stop`; aborts `controller` when it is lost. */
  function keep(lease: Lease, controller: AbortController): { stop(): Promise<void>; current(): Lease } {
    let current = lease
    let timer: ReturnType<typeof setTimeout> | undefined
    let pending: Promise<void> = Promise.resolve()
    let stopped = false
    const lose = (cause?: unknown) => {
      if (!controller.signal.aborted) controller.abort(cause ?? new LeaseLostError(lease.logId, 'expired before its holder could renew it'))
    }
    const tick = () => {
      pending = (async () => {
        if (clock.now() >= current.expiresAt) return lose()
        try {
          current = await leases!.renew(current, ttlMs)
        } catch (error) {
          return lose(error)
        }
        if (!stopped) timer = setTimeout(tick, renewEveryMs)
      })()
    }
    timer = setTimeout(tick, renewEveryMs)
    return {
      current: () => current,
      async stop() {
        stopped = true
        clearTimeout(timer)
        await pending
      },
    }
  }

  async function withLease<T>(key: string, fn: (held: HeldLock) => Promise<T>): Promise<T> {
    const lease = await acquire(key, `lock:${randomUUID()}`)
    const controller = new AbortController()
    const keeper = keep(lease, controller)
    try {
      return await fn({ key, fence: lease.fence, lease, signal: controller.signal })
    } finally {
      await keeper.stop()
      // A lock lost meanwhile is someone else's now: releasing it is refused, and that is fine.
      await leases!.release(keeper.current()).catch((error: unknown) => {
        if (!isHarnessError(error, 'LEASE_LOST')) throw error
      })
    }
  }

  return {
    withLease,
    withLock: (key, fn) => withLease(key, ({ signal }) => fn(signal)),
  }
}
