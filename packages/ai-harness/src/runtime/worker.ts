import type { StreamChunk } from '@tanstack/ai'
import { HarnessError, isHarnessError, type LeaseHeldError } from '../contract/errors.js'
import type { Clock, HarnessStore, WakeupStore } from '../contract/types.js'
import type { Harness } from './harness.js'
import { createHostInternals, type HostInternals } from './host.js'
import { driveInbox } from './drive-inbox.js'
import { DueWatch } from './due-watch.js'
import { HeldRetries } from './held-retries.js'
import { LiveSession } from './live-session.js'
import { WaitingSweep } from './waiting-sweep.js'
import type { Session } from './session.js'
import type { TimingOptions } from './timings.js'
import { pollAttributes, tracePoll } from './worker-tracing.js'

/** Options of a worker; the timings (`leaseMs`, `storeTimeoutMs`, `stallAfterMs`, `stopTimeoutMs`) are those of `createHost`. */
export interface WorkerOptions extends TimingOptions {
  store: HarnessStore
  harnesses: Harness | Harness[]
  /** Identifies the worker in leases. Default: random. */
  workerId?: string
  clock?: Clock
  /** Wakeups taken per poll. Default 10. */
  batchSize?: number
  /** Time between polls when `start()`ed. Default 1 000 ms. */
  pollMs?: number
  /** How long a claimed wakeup stays hidden from other workers. Default 60 s. */
  holdMs?: number
  /**
   * Time between looks for the sessions of dead hosts when `start()`ed, on a store that
   * can prove a host dead (`leases.orphans`: PostgreSQL, PGlite, memory). Such a session
   * is resumed at once instead of at its lease's expiry. Default 250 ms; `start()` looks
   * at once (a restarted process slot resumes its own sessions without waiting for a first
   * interval or a first poll), and each `poll()` looks too.
   */
  orphanPollMs?: number
  /**
   * Time between looks at the sessions that wait for a person (on a store with `sessions`),
   * one page of `batchSize` ids a look: one whose log holds its answer or decision is made due.
   * It covers a host that died while it parked a session at the moment its answer came.
   * Default 60 000 ms; a `poll()` looks when this long has passed since the last look.
   */
  sweepMs?: number
  /** Called with each chunk of the turns the worker resumes, e.g. to forward them. */
  onChunk?: (sessionId: string, chunk: StreamChunk) => void
  /** Called when resuming a session fails; the wakeup comes back after `holdMs`. */
  onError?: (sessionId: string, error: unknown) => void
}

export interface PollResult {
  /** Sessions whose open turn the worker drove (to its end or to its next wait). */
  readonly resumed: string[]
  /** Sessions another host drives now; their wakeups come back later. */
  readonly busy: string[]
  /** Sessions with nothing to do (their wakeup is cancelled). */
  readonly idle: string[]
  readonly failed: string[]
}

/** Takes due wakeups: sleeping tools, answered questions, sessions of dead hosts. */
export interface Worker {
  readonly workerId: string
  /** One poll: claim up to `batchSize` due wakeups and drive each session. */
  poll(): Promise<PollResult>
  start(): void
  /** Stops polling and hands off the sessions it drives, waiting at most `stopTimeoutMs` for a step in flight. */
  stop(): Promise<void>
}

export function createWorker(options: WorkerOptions): Worker {
  const { store } = options
  assertWorkerStore(store)
  const workerId = options.workerId ?? `worker-${crypto.randomUUID()}`
  const { host, resume, prepareResume, store: guarded } = createHostInternals({ ...options, store, hostId: workerId })
  // Claims go through the host's store boundary too: a deadline, and typed errors.
  const wakeups = guarded.wakeups!
  const batchSize = options.batchSize ?? 10
  const holdMs = options.holdMs ?? 60_000
  const orphans = guarded.leases?.orphans
  const sweep = new WaitingSweep(guarded, host.clock, batchSize, options.sweepMs ?? 60_000)
  let stopping = false
  let started = false
  const drive = oncePerSession((sessionId, result: PollResult, onHeld?: OnHeld, take?: Take) => {
    const open = take ?? (() => resume(sessionId))
    return driveSession({ open, options, stopping: () => stopping, store: guarded, clock: host.clock, onHeld }, sessionId, result)
  })
  const clock = host.clock
  const { onHeld, ...between } = betweenPolls({
    wakeups,
    clock,
    batchSize,
    holdMs,
    options,
    started: () => started,
    drive,
    prepare: prepareResume,
  })
  const recoverOrphans = (result: PollResult) => driveOrphans(orphans, batchSize, (sessionId) => drive(sessionId, result))

  const worker: Worker = {
    workerId,
    poll: () =>
      tracePoll(workerId, async (span) => {
        const result = emptyResult()
        // The sessions of dead hosts do not wait for the sweep and the claim (a restarted slot's first poll resumes them).
        const [claimed, orphans] = await Promise.all([
          sweepAndClaim({ sweep, wakeups, batchSize, holdMs, options }, (sessionId) => drive(sessionId, result, onHeld)),
          recoverOrphans(result),
        ])
        span.set(pollAttributes(claimed + orphans, result))
        return result
      }),
    start() {
      if (started) return
      stopping = false
      started = true
      // The first look for orphans goes first, before the poll's span and its sweep: a restarted slot resumes its own sessions at once.
      orphanLooks?.start()
      polls.start()
      between.start()
    },
    async stop() {
      stopping = true
      started = false
      // Hand the sessions off while the poll drives them: a step that never returns must not hold the stop.
      await Promise.all([polls.stop(), orphanLooks?.stop(), between.stop(), host.shutdown().catch(() => {})])
      await host.shutdown()
    },
  }
  const onError = (error: unknown) => options.onError?.('*', error)
  const polls = new Repeat(() => worker.poll(), options.pollMs ?? 1_000, onError)
  const orphanLooks = orphans && new Repeat(() => recoverOrphans(emptyResult()), options.orphanPollMs ?? 250, onError)
  return worker
}

/** Runs `run` now, then again `everyMs` after each run ends, until stopped. */
class Repeat {
  #timer: ReturnType<typeof setTimeout> | undefined
  #current: Promise<unknown> = Promise.resolve()
  #stopped = true

  constructor(
    private readonly run: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.#stopped = false
    this.#tick()
  }

  /** No more runs; resolves when the one in flight is done. */
  stop(): Promise<unknown> {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    return this.#current
  }

  #tick(): void {
    this.#current = this.run()
      .catch(this.onError)
      .finally(() => {
        if (!this.#stopped) this.#timer = setTimeout(() => this.#tick(), this.everyMs)
      })
  }
}

/** One poll's sweep (when due) and claim, each claimed session driven; returns how many it claimed. */
async function sweepAndClaim(
  worker: { sweep: WaitingSweep; wakeups: WakeupStore; batchSize: number; holdMs: number; options: WorkerOptions },
  drive: (sessionId: string) => Promise<void>,
): Promise<number> {
  // What the sweep makes due, the next poll claims.
  await worker.sweep.lookIfDue().catch((error: unknown) => worker.options.onError?.('*', error))
  const claimed = await worker.wakeups.claim(worker.batchSize, worker.holdMs)
  await Promise.all(claimed.map((wakeup) => drive(wakeup.logId)))
  return claimed.length
}

/** A claimed wakeup, an orphan and a retry of one session are driven once at a time: a second call while one runs does nothing. */
function oncePerSession<A extends unknown[]>(
  fn: (sessionId: string, ...args: A) => Promise<void>,
): (sessionId: string, ...args: A) => Promise<void> {
  const driving = new Set<string>()
  return async (sessionId, ...args) => {
    if (driving.has(sessionId)) return
    driving.add(sessionId)
    try {
      await fn(sessionId, ...args)
    } finally {
      driving.delete(sessionId)
    }
  }
}

/**
 * What a started worker does between its polls: a claimed session held by another host is
 * retried by this worker at its lease's expiry (its wakeup stays hidden for `holdMs`, as any
 * claim's); a wakeup the store says was made due (`wakeups.watch`) is claimed when told.
 */
function betweenPolls(worker: {
  wakeups: WakeupStore
  clock: Clock
  batchSize: number
  holdMs: number
  options: WorkerOptions
  started: () => boolean
  drive: (sessionId: string, result: PollResult, onHeld?: OnHeld, take?: Take) => Promise<void>
  prepare: (sessionId: string) => Promise<Take>
}) {
  const { wakeups, options } = worker
  // The log is read ahead of the expiry, so the takeover at the expiry only asks for the lease and reads the tail.
  const retries = new HeldRetries<Take>(
    worker.clock,
    worker.holdMs,
    (sessionId, take) => worker.drive(sessionId, emptyResult(), undefined, take),
    worker.prepare,
    READ_AHEAD_MS,
  )
  // No write: the holder keeps the session's wakeup (a wakeup put back here could land after the holder
  // parked or finished the turn, and wake a session the policy leaves without one, as a parent waiting for its child).
  const onHeld: OnHeld = (sessionId, expiresAt) => {
    if (worker.started()) retries.arm(sessionId, expiresAt)
  }
  const watch = new DueWatch(
    wakeups,
    async () => (await wakeups.claim(worker.batchSize, worker.holdMs)).map((wakeup) => wakeup.logId),
    (sessionId) => worker.drive(sessionId, emptyResult(), onHeld),
    (error) => options.onError?.('*', error),
  )
  return { onHeld, start: () => watch.start(), stop: () => Promise.all([retries.stop(), watch.stop()]) }
}

function assertWorkerStore(store: HarnessStore): void {
  if (!store.wakeups || !store.leases) {
    throw new HarnessError(
      'CAPABILITY_MISSING',
      'Workers need a store with leases and wakeups (memory, PostgreSQL, DynamoDB, S3). Without them, run each session on one host.',
    )
  }
}

const emptyResult = (): PollResult => ({ resumed: [], busy: [], idle: [], failed: [] })

/** Told when a claimed session is held by another host until `expiresAt`. */
type OnHeld = (sessionId: string, expiresAt: number) => void
/** The second half of a resume whose log was read ahead (`prepareResume`). */
type Take = () => Promise<Session | undefined>

/**
 * How long before a held lease's expiry a started worker reads the session's log: enough
 * for a log read of tens of requests; a read that takes longer is waited for at the expiry.
 */
const READ_AHEAD_MS = 1_000

/** Sessions whose host the store proves dead, taken over now, not at their lease's expiry; returns how many. */
async function driveOrphans(
  orphans: ((limit: number) => Promise<string[]>) | undefined,
  limit: number,
  drive: (sessionId: string) => Promise<void>,
): Promise<number> {
  if (!orphans) return 0
  const found = await orphans(limit)
  await Promise.all(found.map(drive))
  return found.length
}

/** Resumes one claimed session: busy when another host holds it, idle when there is nothing to do. */
async function driveSession(
  worker: {
    /** Opens the session (a resume, or the take of one read ahead). */
    open: () => ReturnType<HostInternals['resume']>
    options: WorkerOptions
    stopping: () => boolean
    store: HarnessStore
    clock: Clock
    onHeld: OnHeld | undefined
  },
  sessionId: string,
  result: PollResult,
): Promise<void> {
  const { options } = worker
  if (worker.stopping()) return
  let session: Session | undefined
  try {
    // A worker never creates a session: a wakeup of a session without a log is removed, nothing written.
    session = await worker.open()
  } catch (error) {
    if (isHarnessError(error, 'LEASE_HELD')) {
      const { expiresAt } = error as LeaseHeldError
      if (typeof expiresAt === 'number') worker.onHeld?.(sessionId, expiresAt)
      result.busy.push(sessionId)
      return
    }
    result.failed.push(sessionId)
    options.onError?.(sessionId, error)
    return
  }
  if (!session) {
    result.idle.push(sessionId)
    return
  }
  if (worker.stopping()) {
    // Opened while the worker was stopping: give it back at once, due for another worker.
    await session.handOff().catch(() => {})
    result.busy.push(sessionId)
    return
  }
  try {
    // The open turn, then the prompts submitted to the session (host.submit), in order.
    const runs =
      session instanceof LiveSession
        ? await driveInbox(session, { store: worker.store, clock: worker.clock, onChunk: (chunk) => options.onChunk?.(sessionId, chunk) })
        : 0
    if (runs === 0) {
      result.idle.push(sessionId)
      return
    }
    result.resumed.push(sessionId)
  } catch (error) {
    result.failed.push(sessionId)
    options.onError?.(sessionId, error)
  } finally {
    await session.close().catch(() => {})
  }
}
