import type { AppendOptions, HarnessStore, Lease, LeaseStore, LogRecord, WakeupStore } from '../contract/types.js'
import { FaultRules } from './fault-rules.js'

/** Every call a store answers, by name. */
export type StoreOperation =
  | 'append'
  | 'read'
  | 'delete'
  | 'now'
  | 'leases.acquire'
  | 'leases.renew'
  | 'leases.release'
  | 'wakeups.schedule'
  | 'wakeups.cancel'
  | 'wakeups.due'
  | 'wakeups.claim'

/** One call as the fault rules see it. */
export interface StoreCall {
  readonly op: StoreOperation
  /** The session it is about, when it is about one. */
  readonly logId: string | undefined
  readonly args: readonly unknown[]
}

/**
 * What a fault does to a call.
 *
 * - `fail`: the call never reaches the store (refused connection, reset before the
 *   request was sent); it fails with `error` (default: an `ECONNRESET` error).
 * - `lose-reply`: the call runs (a write lands), then fails with `error` as if the reply
 *   was lost on the way back.
 * - `hang`: the call never answers (a half-open connection). With `run: true` it runs
 *   first, so a write lands and its reply never comes.
 * - `delay`: the call runs after `ms` of real time.
 * - `stall`: the call waits until the rule's `resume()` (a frozen process, thawed later).
 */
export type StoreFault =
  | { readonly kind: 'fail'; readonly error?: unknown }
  | { readonly kind: 'lose-reply'; readonly error?: unknown }
  | { readonly kind: 'hang'; readonly run?: boolean }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'stall' }

export interface FaultRule {
  /** Which calls: an operation, several, or a test of the call. Default: every call. */
  readonly match?: StoreOperation | readonly StoreOperation[] | ((call: StoreCall) => boolean)
  readonly fault: StoreFault
  /** How many matching calls it hits. Default 1; `Infinity` for all. */
  readonly times?: number
  /** Matching calls let through before it hits. Default 0. */
  readonly skip?: number
}

/** A rule in force: how often it hit, and (for `stall`) the way to let its calls go on. */
export interface InjectedFault {
  readonly hits: number
  /** Resolves with the first call the rule hit. */
  readonly hit: Promise<StoreCall>
  /** Lets the calls this `stall` rule holds go on. */
  resume(): void
  /** Takes the rule out; calls it holds stay held until `resume()`. */
  remove(): void
}

/** A store that injects faults into chosen calls of a real store, for tests of what the harness does then. */
export interface FaultyStore extends HarnessStore {
  readonly inner: HarnessStore
  /** Adds a rule; rules are tried in the order they were added, and the first that matches hits. */
  inject(rule: FaultRule): InjectedFault
  /** Every call, in the order made, with what happened to it. */
  readonly calls: ReadonlyArray<StoreCall & { outcome: 'ok' | 'error' | StoreFault['kind'] }>
  /** A frozen process: every call from now on waits, until `thaw()`. */
  freeze(): void
  thaw(): void
  /** Removes every rule and thaws. */
  heal(): void
}

/** The error a dropped connection gives in Node. */
export function connectionReset(detail = 'injected fault'): Error {
  return Object.assign(new Error(`read ECONNRESET (${detail})`), { code: 'ECONNRESET', errno: -104, syscall: 'read' })
}

/** Matches appends that carry a record of `type`, e.g. `appendOf('harness.turn.started')`. */
export function appendOf(type: string): (call: StoreCall) => boolean {
  return (call) => call.op === 'append' && (call.args[2] as readonly LogRecord[]).some((r) => r.type === type)
}

const never = <T>() => new Promise<T>(() => {})

/** A `stall` rule's calls, held until its `resume()`. */
class Stall {
  resumed = false
  readonly #held: Array<() => void> = []
  wait(): Promise<void> {
    return this.resumed ? Promise.resolve() : new Promise((resolve) => this.#held.push(resolve))
  }
  resume(): void {
    this.resumed = true
    for (const release of this.#held.splice(0)) release()
  }
}

type Outcome = 'ok' | 'error' | StoreFault['kind']

/** Runs one call under its fault (or none). */
async function underFault<R>(fault: StoreFault | undefined, stall: Stall | undefined, run: () => Promise<R>): Promise<R> {
  switch (fault?.kind) {
    case undefined:
      return run()
    case 'fail':
      throw fault.error ?? connectionReset()
    case 'lose-reply':
      await run().catch(() => {})
      throw fault.error ?? connectionReset('reply lost after the call ran')
    case 'hang':
      if (fault.run) await run().catch(() => {})
      return never<R>()
    case 'delay':
      await new Promise((resolve) => setTimeout(resolve, fault.ms))
      return run()
    case 'stall':
      await stall!.wait()
      return run()
  }
}

const matcher = (match: FaultRule['match']) => (call: StoreCall) => {
  if (match === undefined) return true
  if (typeof match === 'function') return match(call)
  return typeof match === 'string' ? match === call.op : match.includes(call.op)
}

// long: wraps each store method in the fault rules, a line or two per method
export function faultyStore(inner: HarnessStore): FaultyStore {
  const rules = new FaultRules<{ fault: StoreFault; stall: Stall | undefined }, StoreCall>()
  const calls: Array<StoreCall & { outcome: Outcome }> = []
  let frozen: { release: () => void; thawed: Promise<void> } | undefined

  const wrap = <A extends unknown[], R>(
    op: StoreOperation,
    logIdOf: (first: unknown) => string | undefined,
    run: (...args: A) => Promise<R>,
  ) => {
    return async (...args: A): Promise<R> => {
      const call = { op, logId: logIdOf(args[0]), args, outcome: 'ok' as Outcome }
      calls.push(call)
      if (frozen) await frozen.thawed
      const hit = rules.take(call)
      if (hit) call.outcome = hit.fault.kind
      try {
        return await underFault(hit?.fault, hit?.stall, () => run(...args))
      } catch (error) {
        if (!hit) call.outcome = 'error'
        throw error
      }
    }
  }

  const byLogId = (logId: unknown) => logId as string
  const byLease = (lease: unknown) => (lease as Lease).logId
  const none = () => undefined
  const leases: LeaseStore | undefined = inner.leases && {
    acquire: wrap('leases.acquire', byLogId, (logId: string, owner: string, ttl: number) => inner.leases!.acquire(logId, owner, ttl)),
    renew: wrap('leases.renew', byLease, (lease: Lease, ttl: number) => inner.leases!.renew(lease, ttl)),
    release: wrap('leases.release', byLease, (lease: Lease) => inner.leases!.release(lease)),
  }
  const wakeups: WakeupStore | undefined = inner.wakeups && {
    schedule: wrap('wakeups.schedule', byLogId, (logId: string, at: number) => inner.wakeups!.schedule(logId, at)),
    cancel: wrap('wakeups.cancel', byLogId, (logId: string) => inner.wakeups!.cancel(logId)),
    due: wrap('wakeups.due', none, (limit: number) => inner.wakeups!.due(limit)),
    claim: wrap('wakeups.claim', none, (limit: number, holdMs: number) => inner.wakeups!.claim(limit, holdMs)),
  }
  const store: FaultyStore = {
    inner,
    limits: inner.limits,
    leases,
    wakeups,
    calls,
    append: wrap('append', byLogId, (logId: string, expectedSeq: number, records: readonly LogRecord[], options?: AppendOptions) =>
      inner.append(logId, expectedSeq, records, options),
    ),
    read: wrap('read', byLogId, (logId: string, options?: { after?: number; limit?: number }) => inner.read(logId, options)),
    delete: wrap('delete', byLogId, (logId: string) => inner.delete(logId)),
    close: () => inner.close?.() ?? Promise.resolve(),
    inject(rule) {
      const stall = rule.fault.kind === 'stall' ? new Stall() : undefined
      const handle = rules.add({ fault: rule.fault, stall }, matcher(rule.match), rule)
      return {
        get hits() {
          return handle.hits
        },
        hit: handle.hit,
        resume: () => stall?.resume(),
        remove: () => handle.remove(),
      }
    },
    freeze() {
      if (frozen) return
      let release = () => {}
      const thawed = new Promise<void>((resolve) => {
        release = resolve
      })
      frozen = { release, thawed }
    },
    thaw() {
      frozen?.release()
      frozen = undefined
    },
    heal() {
      rules.clear()
      store.thaw()
    },
  }
  if (inner.now) store.now = wrap('now', none, () => inner.now!())
  return store
}
