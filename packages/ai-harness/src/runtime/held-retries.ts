import type { Clock } from '../contract/types.js'
import { after } from './timings.js'

/**
 * The sessions a started worker found held by another host, each retried at its lease's
 * expiry rather than at the worker's first poll after it. A running turn's wakeup falls due
 * a renewal period before the expiry (see `SessionLease`), so a worker claims the session of
 * a dead host ahead of time, learns the expiry from `LEASE_HELD`, and is there when it comes.
 *
 * With `prepare`, the retry's read comes `readAheadMs` before the expiry (the log read and
 * folded, nothing written), so at the expiry the retry only asks for the lease and reads
 * what landed since: a write of the holder that landed before the new lease is folded in,
 * and one after it is refused by the fence. A read that is not done at the expiry is waited
 * for; one that failed leaves the retry to read at the expiry, as without `prepare`.
 *
 * A retry only asks for the lease when the store's own rule (`now >= expiresAt`, on the
 * clock the store compares with) would grant it to any poll at that moment: it moves when a
 * takeover is tried, not what may take over, so the fence and the clock-skew bound of the
 * lease are unchanged. A retry that finds the session held again arms nothing: the holder
 * keeps the session's wakeup, and a worker that follows a live host's renewals would only
 * spend requests.
 */
export class HeldRetries<P = never> {
  readonly #timers = new Map<string, () => void>()
  readonly #running = new Set<Promise<unknown>>()

  constructor(
    private readonly clock: Clock,
    /** Retries beyond this are left to the session's wakeup (the worker's `holdMs`). */
    private readonly withinMs: number,
    /** Takes the session over; `prepared` is the read ahead, when there was one and it did not fail. */
    private readonly retry: (sessionId: string, prepared: P | undefined) => Promise<unknown>,
    private readonly prepare?: (sessionId: string) => Promise<P>,
    private readonly readAheadMs = 0,
  ) {}

  /** Retries `sessionId` when its lease `expiresAt` (by the worker's clock); one timer a session. */
  arm(sessionId: string, expiresAt: number): void {
    const wait = Math.max(0, expiresAt - this.clock.now())
    if (this.#timers.has(sessionId) || !(wait <= this.withinMs)) return
    let prepared: Promise<P | undefined> | undefined
    const prepare = this.prepare
    const cancelRead = prepare
      ? after(Math.max(0, wait - this.readAheadMs), () => {
          prepared = prepare(sessionId).catch(() => undefined)
        })
      : () => {}
    const cancel = after(wait, () => {
      this.#timers.delete(sessionId)
      const running: Promise<unknown> = (async () => this.retry(sessionId, await prepared))().finally(() => this.#running.delete(running))
      this.#running.add(running)
    })
    this.#timers.set(sessionId, () => {
      cancelRead()
      cancel()
    })
  }

  /** Drops the timers that have not fired; resolves when the retries in flight are done. */
  async stop(): Promise<void> {
    for (const cancel of this.#timers.values()) cancel()
    this.#timers.clear()
    await Promise.allSettled([...this.#running])
  }
}
