import type { HarnessStore, LeaseStore, LogRecord, WakeupStore } from '../../contract/types.js'
import { connectionReset } from '../faulty-store.js'
import type { SimRandom } from './random.js'
import type { SimLedger } from './sim-ledger.js'
import type { VirtualTime } from './virtual-time.js'

/** How often each fault hits a store call while the world's faults are on (each a probability per call). */
export interface SimFaults {
  /** The call fails before it reaches the store. */
  readonly fail: number
  /** The call runs (a write lands), and its reply is lost. */
  readonly loseReply: number
  /** The call never answers (after it ran, half the time). */
  readonly hang: number
  /** The process dies at this call, before or after it ran. */
  readonly crash: number
  /** The longest delay of a call, in virtual ms (each call waits 0 to this). */
  readonly maxDelayMs: number
}

/** The process a store instance belongs to, as its store wrapper sees it. */
export interface SimProcess {
  readonly name: string
  readonly alive: boolean
  crash(): void
  /** True while the world injects faults. */
  faultsOn(): boolean
  /** While this process's lease renewals fail (its other calls work): `fail` or `hang`; else `false`. */
  renewalsFail(): false | 'fail' | 'hang'
}

type Fault = 'none' | 'fail' | 'lose-reply' | 'hang' | 'hang-after-run'

const never = <T>() => new Promise<T>(() => {})

/** The fault of one store call: a renewal outage first, then the world's odds while its faults are on. */
function faultFor(op: string, process: SimProcess, random: SimRandom, faults: SimFaults): Fault {
  const outage = op === 'leases.renew' && process.renewalsFail()
  if (outage) return outage
  if (!process.faultsOn()) return 'none'
  const r = random.next()
  if (r < faults.fail) return 'fail'
  if (r < faults.fail + faults.loseReply) return 'lose-reply'
  if (r < faults.fail + faults.loseReply + faults.hang) return random.chance(0.5) ? 'hang' : 'hang-after-run'
  return 'none'
}

/**
 * A process's store instance in a simulated world: every call waits a random virtual
 * delay, and while faults are on may fail before it runs, run and lose its reply, hang,
 * or kill its process before or after it ran. Appends that land and deletes that resolve
 * go into the ledger. A dead process's calls never answer.
 */
export function simStore(
  inner: HarnessStore,
  world: { time: VirtualTime; random: SimRandom; ledger: SimLedger; faults: SimFaults },
  process: SimProcess,
): HarnessStore {
  const { time, random, ledger, faults } = world
  const call = <T>(op: string, run: () => Promise<T>): Promise<T> => {
    if (!process.alive) return never()
    const fault = faultFor(op, process, random, faults)
    const crash = process.faultsOn() && random.chance(faults.crash) ? random.pick(['before', 'after'] as const) : undefined
    const delay = random.int(0, process.faultsOn() ? faults.maxDelayMs : 2)
    return new Promise<T>((resolve, reject) => {
      time.at(delay, () => {
        if (!process.alive) return
        if (crash === 'before') return process.crash()
        if (fault === 'fail') return reject(connectionReset('simulated: refused before it ran'))
        if (fault === 'hang') return
        const work = time.real(run)
        work.then(
          (value) => {
            if (crash === 'after') return process.crash()
            if (!process.alive || fault === 'hang-after-run') return
            if (fault === 'lose-reply') return reject(connectionReset('simulated: reply lost after the call ran'))
            resolve(value)
          },
          (error: unknown) => {
            if (crash === 'after') return process.crash()
            if (!process.alive || fault === 'hang-after-run') return
            reject(fault === 'lose-reply' ? connectionReset('simulated: reply lost after the call failed') : error)
          },
        )
      })
    })
  }
  const leases: LeaseStore | undefined = inner.leases && {
    acquire: (logId, owner, ttl) => call('leases.acquire', () => inner.leases!.acquire(logId, owner, ttl)),
    renew: (lease, ttl) => call('leases.renew', () => inner.leases!.renew(lease, ttl)),
    release: (lease) => call('leases.release', () => inner.leases!.release(lease)),
  }
  const wakeups: WakeupStore | undefined = inner.wakeups && {
    schedule: (logId, at) => call('wakeups.schedule', () => inner.wakeups!.schedule(logId, at)),
    cancel: (logId) => call('wakeups.cancel', () => inner.wakeups!.cancel(logId)),
    due: (limit) => call('wakeups.due', () => inner.wakeups!.due(limit)),
    claim: (limit, holdMs) => call('wakeups.claim', () => inner.wakeups!.claim(limit, holdMs)),
  }
  return {
    limits: inner.limits,
    leases,
    wakeups,
    ...(inner.now ? { now: () => call('now', () => inner.now!()) } : {}),
    ...(inner.sessions && {
      sessions: {
        list: (options) => call('sessions.list', () => inner.sessions!.list(options)),
        waiting: (options) => call('sessions.waiting', () => inner.sessions!.waiting(options)),
      },
    }),
    append: (logId, expectedSeq, records: readonly LogRecord[], options) =>
      call('append', async () => {
        ledger.appendSent(logId, options?.lease)
        const result = await inner.append(logId, expectedSeq, records, options)
        if (records.length > 0) ledger.landed(logId, expectedSeq, records)
        return result
      }),
    read: (logId, options) => call('read', () => inner.read(logId, options)),
    delete: (logId) =>
      call('delete', async () => {
        await inner.delete(logId)
        ledger.deleted(logId)
      }),
    close: async () => {},
  }
}
