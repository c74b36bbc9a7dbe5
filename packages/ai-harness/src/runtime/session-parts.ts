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
export async function settledWithin(writer: SessionWriter, ms: number): Promise<boolean> {
  let cancel = () => {}
  const known = await Promise.race([
    writer.settle().catch(() => false),
    new Promise<boolean>((resolve) => {
      cancel = after(ms, () => resolve(false))
    }),
  ])
  cancel()
  return known
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
