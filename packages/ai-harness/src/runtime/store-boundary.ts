import { HarnessError, isHarnessError } from '../contract/errors.js'
import { assertLogId } from '../contract/prepare-batch.js'
import type { Clock, HarnessStore, Lease, LeaseStore, SessionListStore, WakeupStore } from '../contract/types.js'
import { after } from './timings.js'

/** Where the runtime meets the app's store: deadlines, typed errors, calls in flight. */
export interface StoreBoundaryOptions {
  /** The longest the runtime waits for one store call; then it counts as failed, its outcome unknown. */
  readonly timeoutMs: number
  /** Tells when a call started, to spot a session that makes no progress. */
  readonly clock: Clock
}

/**
 * The app's store as the runtime uses it. Every call has a deadline, so a call that
 * never answers (a half-open connection) cannot hang a turn, a close or a shutdown;
 * every failure is a `HarnessError` (an error of the driver becomes `STORE_UNAVAILABLE`
 * with it as the cause); and the calls in flight are known per session.
 */
export interface GuardedStore extends HarnessStore {
  readonly inner: HarnessStore
  /** When the oldest call about `logId` that is still waiting started (clock time), if one is waiting. */
  inFlightSince(logId: string): number | undefined
}

/** True for a failure after which nobody knows whether a write happened: retry, read back, keep the wakeup. */
export function isOutcomeUnknown(error: unknown): boolean {
  return !isHarnessError(error) || error.code === 'STORE_UNAVAILABLE'
}

/** Store calls with a deadline, and the calls each session still waits for. */
class DeadlineCalls {
  /** Start times (clock ms) of the calls in flight, by session. */
  readonly #waiting = new Map<string, Map<symbol, number>>()

  constructor(
    private readonly store: HarnessStore,
    private readonly options: StoreBoundaryOptions,
  ) {}

  inFlightSince(logId: string): number | undefined {
    const calls = this.#waiting.get(logId)
    return calls ? Math.min(...calls.values()) : undefined
  }

  /** Runs `run` as the store call `what`: typed errors, and `STORE_UNAVAILABLE` at the deadline. */
  call<T>(what: string, logId: string | undefined, run: () => Promise<T>, checkId = false): Promise<T> {
    try {
      if (checkId) assertLogId(logId, this.store.limits)
    } catch (error) {
      return Promise.reject(error)
    }
    const done = this.#track(what, logId)
    const { timeoutMs } = this.options
    return new Promise<T>((resolve, reject) => {
      const cancelTimer = after(timeoutMs, () => {
        done()
        reject(
          new HarnessError(
            'STORE_UNAVAILABLE',
            `The store did not answer ${what}${about(logId)} within ${timeoutMs} ms (the host's storeTimeoutMs); its outcome is unknown. Check the store's connection; the session is resumed from its log once the store answers.`,
          ),
        )
      })
      const settle = (outcome: () => void) => {
        cancelTimer()
        done()
        outcome()
      }
      let started: Promise<T>
      try {
        started = run()
      } catch (error) {
        started = Promise.reject(error)
      }
      started.then(
        (value) => settle(() => resolve(value)),
        (error: unknown) => settle(() => reject(typed(error, what, logId))),
      )
    })
  }

  /** Records a call in flight; returns what ends it. */
  #track(what: string, logId: string | undefined): () => void {
    if (logId === undefined) return () => {}
    const token = Symbol(what)
    const calls = this.#waiting.get(logId) ?? new Map<symbol, number>()
    calls.set(token, this.options.clock.now())
    this.#waiting.set(logId, calls)
    return () => {
      calls.delete(token)
      if (calls.size === 0 && this.#waiting.get(logId) === calls) this.#waiting.delete(logId)
    }
  }
}

const about = (logId: string | undefined) => (logId === undefined ? '' : ` for session ${JSON.stringify(logId)}`)

/** The store's `leases.orphans`, called on its lease store; only for a store that has it. */
const orphansOf =
  (store: HarnessStore) =>
  (limit: number): Promise<string[]> =>
    store.leases?.orphans?.(limit) ?? Promise.resolve([])

export function guardStore(store: HarnessStore, options: StoreBoundaryOptions): GuardedStore {
  if ((store as Partial<GuardedStore>).inFlightSince && (store as GuardedStore).inner) return store as GuardedStore
  const calls = new DeadlineCalls(store, options)
  const call = <T>(what: string, logId: string | undefined, run: () => Promise<T>, checkId = false) => calls.call(what, logId, run, checkId)

  const leases: LeaseStore | undefined = store.leases && {
    acquire: (logId, owner, ttlMs) => call('leases.acquire', logId, () => store.leases!.acquire(logId, owner, ttlMs), true),
    renew: (lease: Lease, ttlMs) => call('leases.renew', lease.logId, () => store.leases!.renew(lease, ttlMs)),
    release: (lease: Lease) => call('leases.release', lease.logId, () => store.leases!.release(lease)),
    ...(store.leases.orphans && { orphans: (limit: number) => call('leases.orphans', undefined, () => orphansOf(store)(limit)) }),
    ...(store.leases.defaultLeaseMs !== undefined && { defaultLeaseMs: store.leases.defaultLeaseMs }),
  }
  const wakeups: WakeupStore | undefined = store.wakeups && {
    schedule: (logId, at) => call('wakeups.schedule', logId, () => store.wakeups!.schedule(logId, at), true),
    cancel: (logId) => call('wakeups.cancel', logId, () => store.wakeups!.cancel(logId), true),
    due: (limit) => call('wakeups.due', undefined, () => store.wakeups!.due(limit)),
    claim: (limit, holdMs) => call('wakeups.claim', undefined, () => store.wakeups!.claim(limit, holdMs)),
    // No deadline: a watch only listens, and a store that cannot start one costs a poll.
    ...(store.wakeups.watch && { watch: store.wakeups.watch.bind(store.wakeups) }),
  }
  const guarded: GuardedStore = {
    inner: store,
    limits: store.limits,
    leases,
    wakeups,
    inFlightSince: (logId) => calls.inFlightSince(logId),
    append: (logId, expectedSeq, records, appendOptions) =>
      call('append', logId, () => store.append(logId, expectedSeq, records, appendOptions), true),
    read: (logId, readOptions) => call('read', logId, () => store.read(logId, readOptions), true),
    delete: (logId) => call('delete', logId, () => store.delete(logId), true),
    close: () => call('close', undefined, () => store.close?.() ?? Promise.resolve()),
    ...(store.sessions && { sessions: guardListings(store.sessions, call) }),
  }
  if (store.now) guarded.now = () => call('now', undefined, () => store.now!())
  return guarded
}

/** The listings of a store with `sessions`, with a deadline and typed errors like every other call. */
function guardListings(
  sessions: SessionListStore,
  call: <T>(what: string, logId: string | undefined, run: () => Promise<T>) => Promise<T>,
): SessionListStore {
  return {
    list: (options) => call('sessions.list', undefined, () => sessions.list(options)),
    waiting: (options) => call('sessions.waiting', undefined, () => sessions.waiting(options)),
  }
}

/** A harness error passes as it is; anything else (ECONNRESET, a driver's error) becomes STORE_UNAVAILABLE with it as the cause. */
function typed(error: unknown, what: string, logId: string | undefined): unknown {
  if (isHarnessError(error)) return error
  const detail = error instanceof Error ? error.message : String(error)
  return new HarnessError(
    'STORE_UNAVAILABLE',
    `The store failed during ${what}${about(logId)} (${detail}); for a write, nobody knows whether it happened. Check that the store is reachable; the session is resumed from its log.`,
    { cause: error },
  )
}

/** The store's own time where it has a clock (`store.now()`), else the host's: for durable times and lease decisions. */
export function durableNow(store: HarnessStore, clock: Clock): Promise<number> {
  return store.now ? store.now() : Promise.resolve(clock.now())
}
