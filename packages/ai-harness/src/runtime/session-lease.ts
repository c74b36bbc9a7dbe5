import { type HarnessError, isHarnessError, LeaseLostError } from '../contract/errors.js'
import type { Clock, Lease } from '../contract/types.js'
import type { GuardedStore } from './store-boundary.js'
import { type Timer, unrefTimer } from './timers.js'

export interface SessionLeaseOptions {
  readonly leaseMs: number
  /** Time between renewals. */
  readonly renewEveryMs: number
  /** A store call of the session waiting longer than this means no progress: the lease is let go. */
  readonly stallAfterMs: number
  readonly clock: Clock
  /** True while this host drives a turn: then the session's wakeup follows the lease's expiry. */
  readonly driving: () => boolean
  /** Called once when the lease is gone: lost, taken over, or let go for lack of progress. */
  readonly onLost: (error: HarnessError) => void
}

/** Where a running turn's wakeup sits: one renewal period before its lease's expiry (never before the epoch). */
export const wakeupBeforeExpiry = (expiresAt: number, renewEveryMs: number): number => Math.max(0, expiresAt - renewEveryMs)

/**
 * The lease of one open session: renewed on a timer while the host makes progress,
 * followed by the session's wakeup while a turn runs (if the host dies, a worker
 * takes over at its expiry), and released when the session is let go.
 *
 * A host that makes no progress stops renewing: when one of the session's store calls
 * has waited longer than `stallAfterMs` (a half-open connection, a frozen process),
 * the lease is left to expire, so another host takes the session over instead of
 * waiting on this one forever.
 */
export class SessionLease {
  #lease: Lease | undefined
  #timer: Timer | undefined
  #renewing = false
  /** The renewal in flight (a timer's or a confirm's), so a freshness check waits for it instead of asking again. */
  #renewal: Promise<unknown> | undefined
  /**
   * This host's time when the last renewal that succeeded was asked for: the store set the
   * expiry at that time or later, so by this host's clock the lease lives at least until
   * `confirmedAt + leaseMs`, and a skewed host cannot take it before `confirmedAt + renewEveryMs`.
   */
  #confirmedAt = Number.NEGATIVE_INFINITY
  /** No more renewals: the lease was lost, let go for lack of progress, or released. */
  #gone = false
  /** The store said the lease is not ours any more: releasing it would be refused. */
  #lost = false

  constructor(
    private readonly store: GuardedStore,
    private readonly sessionId: string,
    lease: Lease | undefined,
    private readonly options: SessionLeaseOptions,
  ) {
    this.#lease = lease
    if (lease && store.leases) {
      this.#timer = setInterval(() => this.#tick(), options.renewEveryMs)
      unrefTimer(this.#timer)
    }
  }

  /** The lease to write with: even after it was let go, so a fencing store can refuse a superseded writer. */
  get current(): Lease | undefined {
    return this.#lease
  }

  /** The fence to write in turn records: null on a store without leases. */
  get fence(): number | null {
    return this.#lease?.fence ?? null
  }

  /**
   * Renews the lease now, before a run writes anything: a session object whose lease
   * is gone (taken over, or ended by a delete) learns it here and writes nothing.
   */
  async confirm(): Promise<void> {
    const held = this.#lease
    if (!held || !this.store.leases) return
    if (this.#gone) throw new LeaseLostError(this.sessionId, 'is no longer held by this session object')
    const asked = this.options.clock.now()
    try {
      this.#lease = await this.store.leases.renew(held, this.options.leaseMs)
      this.#confirmedAt = asked
    } catch (error) {
      if (isHarnessError(error, 'LEASE_LOST')) this.#lose(error, true)
      throw error
    }
  }

  /**
   * Resolves when, by this host's own clock, the lease is fresh enough to start a side
   * effect (a step attempt, the end of a sleep, an approved call): renewed less than
   * `renewEveryMs` ago, so no host whose clock is within the documented skew bound
   * (`leaseMs - renewEveryMs`) can take the session over yet. A lease whose renewals
   * failed or hang is renewed here first; a renewal that fails rejects, and the effect
   * does not start. Appends that work do not make a lease fresh.
   */
  async ensureFresh(): Promise<void> {
    if (!this.#lease || !this.store.leases) return
    if (this.#isFresh()) return
    if (this.#renewal) await this.#renewal.catch(() => {})
    if (this.#isFresh()) return
    const renewal = this.confirm()
    this.#renewal = renewal
    try {
      await renewal
    } finally {
      if (this.#renewal === renewal) this.#renewal = undefined
    }
  }

  #isFresh(): boolean {
    if (this.#gone) throw new LeaseLostError(this.sessionId, 'is no longer held by this session object')
    return this.options.clock.now() - this.#confirmedAt < this.options.renewEveryMs
  }

  /**
   * While this host drives a turn, the session's wakeup sits `renewEveryMs` before the
   * lease's expiry. A live host's next renewal moves it on before it falls due; if the host
   * died, a worker claims it ahead of the expiry, finds the lease held until then
   * (`LEASE_HELD` with `expiresAt`) and takes the session over at that moment, not at its
   * first poll after it.
   */
  async keepWakeupAtExpiry(): Promise<void> {
    const lease = this.#lease
    if (this.store.wakeups && lease && !this.#gone && this.options.driving())
      await this.store.wakeups.schedule(this.sessionId, wakeupBeforeExpiry(lease.expiresAt, this.options.renewEveryMs))
  }

  /** Stops renewing and frees the lease for other hosts (best effort: an unreachable store lets it expire). */
  async release(): Promise<void> {
    this.#stopTimer()
    this.#gone = true
    const held = this.#lease
    if (held && !this.#lost && this.store.leases) {
      this.#lost = true
      await this.store.leases.release(held).catch(() => {})
    }
  }

  /**
   * Stops renewing: the session stopped driving (a conflict, a lost lease). The lease
   * lapses unless `release()` frees it first; a `LEASE_LOST` means there is nothing to free.
   */
  stopRenewing(error: HarnessError): void {
    if (isHarnessError(error, 'LEASE_LOST')) this.#lost = true
    this.#gone = true
    this.#stopTimer()
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
  }

  #lose(error: HarnessError, byStore = false): void {
    if (byStore) this.#lost = true
    if (this.#gone) return
    this.#gone = true
    this.#stopTimer()
    this.options.onLost(error)
  }

  #tick(): void {
    const held = this.#lease
    if (!held || this.#gone || !this.store.leases) return
    const since = this.store.inFlightSince(this.sessionId)
    const waited = since === undefined ? 0 : this.options.clock.now() - since
    if (waited > this.options.stallAfterMs) {
      this.#lose(
        new LeaseLostError(
          this.sessionId,
          `was let go: a store call of this session has waited ${waited} ms (over stallAfterMs, ${this.options.stallAfterMs} ms), so another host may take the session over`,
        ),
      )
      return
    }
    if (this.#renewing) return
    this.#renewing = true
    const asked = this.options.clock.now()
    const renewal = this.store.leases.renew(held, this.options.leaseMs)
    this.#renewal = renewal
    renewal
      .then(
        async (renewed) => {
          if (this.#gone) return
          this.#lease = renewed
          this.#confirmedAt = Math.max(this.#confirmedAt, asked)
          await this.keepWakeupAtExpiry()
        },
        (error: unknown) => {
          // A store that cannot answer now gets another try at the next tick; the lease expires if it never does.
          if (isHarnessError(error, 'LEASE_LOST')) this.#lose(error, true)
        },
      )
      .catch(() => {})
      .finally(() => {
        this.#renewing = false
        if (this.#renewal === renewal) this.#renewal = undefined
      })
  }
}
