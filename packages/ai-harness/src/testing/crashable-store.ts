import type { HarnessStore, LeaseStore, LogRecord, SessionListStore, WakeupStore } from '../contract/types.js'

/** When a crash trips: before the matching append reaches the store, or right after it landed. */
export type CrashPoint = 'before' | 'after'

/**
 * A store that can "die" like a killed process: once crashed, every call on it hangs
 * forever, so the run that used it writes nothing more. Open a fresh store on the same
 * data to play the process that restarts. For in-process crash tests; the real thing
 * (SIGKILL) is tested across processes.
 */
export interface CrashableStore extends HarnessStore {
  /** Crash now. */
  crash(): void
  readonly crashed: boolean
  /** Crash at the first append whose records match, before or after it lands. */
  crashOnAppend(match: (records: readonly LogRecord[], logId: string) => boolean, point: CrashPoint): void
  /** A promise that never settles: what a crashed process's pending work becomes. */
  hang<T = never>(): Promise<T>
}

export function crashable(inner: HarnessStore): CrashableStore {
  let crashed = false
  let trigger: { match: (records: readonly LogRecord[], logId: string) => boolean; point: CrashPoint } | undefined
  const hang = <T>() => new Promise<T>(() => {})
  const guard = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) => {
    return async (...args: A): Promise<R> => {
      if (crashed) return hang()
      const result = await fn(...args)
      return crashed ? hang() : result
    }
  }
  const leases: LeaseStore | undefined = inner.leases && {
    acquire: guard((logId: string, owner: string, ttl: number) => inner.leases!.acquire(logId, owner, ttl)),
    renew: guard((lease, ttl: number) => inner.leases!.renew(lease, ttl)),
    release: guard((lease) => inner.leases!.release(lease)),
  }
  const wakeups: WakeupStore | undefined = inner.wakeups && {
    schedule: guard((logId: string, at: number) => inner.wakeups!.schedule(logId, at)),
    cancel: guard((logId: string) => inner.wakeups!.cancel(logId)),
    due: guard((limit: number) => inner.wakeups!.due(limit)),
    claim: guard((limit: number, holdMs: number) => inner.wakeups!.claim(limit, holdMs)),
  }
  // The listings and the store's clock pass through as well: a host on the crashable store
  // takes durable times from the store's clock and lists sessions, as it would on the store itself.
  const sessions: SessionListStore | undefined = inner.sessions && {
    list: guard((options) => inner.sessions!.list(options)),
    waiting: guard((options) => inner.sessions!.waiting(options)),
  }
  const now = inner.now && guard(() => inner.now!())
  return {
    limits: inner.limits,
    leases,
    wakeups,
    sessions,
    ...(now ? { now } : {}),
    get crashed() {
      return crashed
    },
    crash() {
      crashed = true
    },
    crashOnAppend(match, point) {
      trigger = { match, point }
    },
    hang,
    // The append's options (its lease) go through: a fencing store refuses a superseded host's append.
    append: async (logId, expectedSeq, records, options) => {
      if (crashed) return hang()
      if (trigger?.match(records, logId)) {
        const { point } = trigger
        trigger = undefined
        if (point === 'before') {
          crashed = true
          return hang()
        }
        await inner.append(logId, expectedSeq, records, options)
        crashed = true
        return hang()
      }
      return inner.append(logId, expectedSeq, records, options)
    },
    read: guard((logId: string, options?: { after?: number; limit?: number }) => inner.read(logId, options)),
    delete: guard((logId: string) => inner.delete(logId)),
    close: () => inner.close?.() ?? Promise.resolve(),
  }
}
