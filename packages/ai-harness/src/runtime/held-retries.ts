import type { Clock } from '../contract/types.js'
import { after } from './timings.js'

/**
 * The sessions a started worker found held by another host, each retried at its lease's
 * expiry rather than at the worker's first poll after it. A running turn's wakeup falls due
 * a renewal period before the expiry (see `SessionLease`), so a worker claims the session of
 * a dead host ahead of time, learns the expiry from `LEASE_HELD`, and is there when it comes.
 *
 * A retry only asks for the lease when the store's own rule (`now >= expiresAt`, on the
 * clock the store compares with) would grant it to any poll at that moment: it moves when a
 * takeover is tried, not what may take over, so the fence and the clock-skew bound of the
 * lease are unchanged. A retry that finds the session held again arms nothing: the holder
 * keeps the session's wakeup, and a worker that follows a live host's renewals would only
 * spend requests.
 */
export class HeldRetries {
  readonly #timers = new Map<string, () => void>()
  readonly #running = new Set<Promise<unknown>>()

  constructor(
    private readonly clock: Clock,
    /** Retries beyond this are left to the session's wakeup (the worker's `holdMs`). */
    private readonly withinMs: number,
    private readonly retry: (sessionId: string) => Promise<unknown>,
  ) {}

  /** Retries `sessionId` when its lease `expiresAt` (by the worker's clock); one timer a session. */
  arm(sessionId: string, expiresAt: number): void {
    const wait = Math.max(0, expiresAt - this.clock.now())
    if (this.#timers.has(sessionId) || !(wait <= this.withinMs)) return
    const cancel = after(wait, () => {
      this.#timers.delete(sessionId)
      const running: Promise<unknown> = this.retry(sessionId).finally(() => this.#running.delete(running))
      this.#running.add(running)
    })
    this.#timers.set(sessionId, cancel)
  }

  /** Drops the timers that have not fired; resolves when the retries in flight are done. */
  async stop(): Promise<void> {
    for (const cancel of this.#timers.values()) cancel()
    this.#timers.clear()
    await Promise.allSettled([...this.#running])
  }
}
