import { guardAppends } from '../secrets/store-guard.js'
import type { SessionArgs } from './session.js'
import type { SessionState } from './session-fold.js'
import { SessionLease } from './session-lease.js'
import type { SessionRuntime } from './session-runtime.js'
import { SessionWriter } from './session-writer.js'
import type { GuardedStore } from './store-boundary.js'
import { after } from './timings.js'
import { traceStore } from './store-tracing.js'
import type { TurnRun } from './turn-run.js'
import { WakeupPolicy } from './wakeup-policy.js'

/** What a session object is built from: its lease, its one writer, its wakeup policy and what its parts share. */
export interface SessionParts {
  readonly lease: SessionLease
  readonly writer: SessionWriter
  readonly wakeups: WakeupPolicy
  readonly runtime: SessionRuntime
}

/**
 * Builds the parts of a session object over its folded log. `running` names the run in
 * progress, if any: the lease renews itself only while one runs, and a stopped writer aborts it.
 */
export function sessionParts(args: SessionArgs, running: () => TurnRun | undefined): SessionParts {
  const { store, harness, sessionId, state, clock, timings } = args
  const lease: SessionLease = new SessionLease(store, sessionId, args.lease, {
    ...timings,
    clock,
    driving: () => running() !== undefined,
    onLost: (error) => writer.stop(error),
  })
  const scanner = args.sessionSecrets.scanner
  // Spans of the session's store calls, with its secrets kept out of their attributes.
  const traced = traceStore(store, { hostId: args.hostId, scanner }) as GuardedStore
  // Every append of the session passes the secret guard: a gap in a scan point fails instead of leaking.
  const writer: SessionWriter = new SessionWriter(guardAppends(traced, scanner) as GuardedStore, sessionId, state, {
    lease: () => lease.current,
    onStop: (error) => {
      lease.stopRenewing(error)
      running()?.abortController.abort()
    },
  })
  const runtime: SessionRuntime = {
    sessionId,
    harness,
    store: traced,
    state,
    writer,
    scanner,
    sessionSecrets: args.sessionSecrets,
    clock,
    secrets: new Map(Object.entries(args.secrets)),
    maxStepBytes: Math.min(harness.options.maxStepBytes ?? 64 * 1024, store.limits.maxRecordBytes),
    // Without wakeups nobody would wake a parked sleep: then every sleep waits in the process.
    parkAfterMs: store.wakeups ? (harness.options.parkAfterMs ?? 5_000) : Number.POSITIVE_INFINITY,
    leaseFresh: () => lease.ensureFresh(),
    // Outside a run (none in practice: steps run in turns), an attempt writes through the session's writer.
    stepScope: () => ({ writer, release: () => {} }),
    openChild: args.openChild,
  }
  return { lease, writer, wakeups: new WakeupPolicy(store, sessionId, state, clock), runtime }
}

/** Whether the writer knows the log's state, waiting at most `ms` behind a write in flight. */
export function settledWithin(writer: SessionWriter, ms: number): Promise<boolean> {
  return doneWithin(
    writer.settle().catch(() => false),
    ms,
  )
}

/** What `work` resolves with, or false when it takes longer than `ms` (a rejection is false too). */
export async function doneWithin(work: Promise<boolean | undefined | void>, ms: number): Promise<boolean> {
  let cancel = () => {}
  const done = await Promise.race([
    work.then((value) => value !== false).catch(() => false),
    new Promise<boolean>((resolve) => {
      cancel = after(ms, () => resolve(false))
    }),
  ])
  cancel()
  return done
}

/**
 * Before a handed-off session is let go: once the log's state is known, a turn still open
 * (or one whose last write is in doubt) is due now, so any host or worker resumes it at
 * once. Returns the failure to throw once the session is let go, if any: the wakeup at the
 * lease's expiry then stays, and a worker takes the turn over at that time.
 */
export async function handOffWakeup(
  writer: SessionWriter,
  lease: SessionLease,
  wakeups: WakeupPolicy,
  state: SessionState,
  stopTimeoutMs: number,
): Promise<unknown> {
  try {
    const known = await settledWithin(writer, stopTimeoutMs)
    if (!writer.stopped && (!known || state.openTurn)) {
      await lease.confirm()
      await wakeups.dueNow()
    }
    return undefined
  } catch (error) {
    return error
  }
}

/** What a session object that stops does with its wakeup: hand it off (due now), let it go (the session is done with), or keep it as it is. */
export type WakeupOnStop = 'hand off' | 'let go' | 'keep'

/**
 * The wakeup of a session object whose run has stopped, before it lets the lease go.
 * Returns the failure to throw once the session is let go, if any (see {@link handOffWakeup}).
 */
export async function wakeupOnStop(
  parts: { writer: SessionWriter; lease: SessionLease; wakeups: WakeupPolicy; args: SessionArgs },
  mode: WakeupOnStop,
): Promise<unknown> {
  const { writer, args } = parts
  const { stopTimeoutMs } = args.timings
  if (mode === 'hand off') return handOffWakeup(writer, parts.lease, parts.wakeups, args.state, stopTimeoutMs)
  // After a write whose outcome is unknown, the wakeup stays: a worker looks at the log.
  const known = await settledWithin(writer, stopTimeoutMs)
  if (mode === 'let go' && !writer.stopped) await parts.wakeups.letGo(known, { wakeParent: args.wakeParentWhenIdle }).catch(() => {})
  return undefined
}
