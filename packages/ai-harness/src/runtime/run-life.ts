import type { StreamChunk } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import { scrubError } from '../secrets/error-scrub.js'
import type { SessionLease } from './session-lease.js'
import type { SessionRuntime } from './session-runtime.js'
import type { SessionWriter } from './session-writer.js'
import type { TurnRun, TurnRunEnd, TurnRunOutcome, TurnRunStream } from './turn-run.js'
import type { WakeupPolicy } from './wakeup-policy.js'

/** What a run of a turn does once the session may be driven: send a turn, or recover one. */
export type TurnRunBody = (turnRun: TurnRun, runtime: SessionRuntime) => TurnRunStream

/** What the session object that starts a run gives it, and what it is told as the run ends. */
export interface RunLifeParts {
  readonly sessionId: string
  readonly writer: SessionWriter
  readonly lease: SessionLease
  readonly wakeups: WakeupPolicy
  readonly runtime: SessionRuntime
  /** The run finished its turn: the session object is idle. */
  finished(): void
  /** The run parked: the session object lets the session go (its wakeup is set already). */
  parked(): Promise<void>
  /** The run is over, however it ended (`undefined`: it threw or was stopped before it returned). */
  ended(outcome: TurnRunOutcome | undefined): void
}

/**
 * The life of one run: before it writes, the log's state is known, the lease confirmed and
 * the wakeup at its expiry; then the body and its tail; after it, where the wakeup goes.
 */
export async function* runLife(parts: RunLifeParts, turnRun: TurnRun, body: TurnRunBody): AsyncGenerator<StreamChunk> {
  const { writer, lease, runtime } = parts
  // How the run ended, as it returned it: kept before its tail streams (see `TurnRunEnd`).
  let outcome: TurnRunOutcome | undefined
  try {
    if (!(await writer.settle())) throw inDoubt(parts.sessionId)
    await lease.confirm()
    await lease.keepWakeupAtExpiry()
    const end = yield* body(turnRun, { ...runtime, writer: turnRun.writer, stepScope: () => turnRun.stepScope() })
    outcome = end?.outcome
    yield* tailOf(end)
    if (!turnRun.abandoned) await afterRun(parts, outcome)
  } catch (error) {
    // No secret leaves the session in an error message either (a model's or a tool's error text).
    throw scrubError(runtime.scanner, error)
  } finally {
    parts.ended(outcome)
    turnRun.finish()
  }
}

/** The last chunks of a run that ended (a question, approvals, the park), then the error its stream ends with, if any. */
async function* tailOf(end: TurnRunEnd | undefined): AsyncGenerator<StreamChunk> {
  if (end) yield* end.tail
  if (end?.error !== undefined) throw end.error
}

/** After a run: where the wakeup goes, and whether the host lets the session go. */
async function afterRun(parts: RunLifeParts, outcome: TurnRunOutcome | undefined): Promise<void> {
  if (outcome?.kind === 'finished') {
    parts.finished()
    await parts.wakeups.finished()
  } else if (outcome?.kind === 'parked') {
    // A parked session is free for whoever resumes it: a worker at the wake time, or the host that answers.
    try {
      await parts.wakeups.parked(outcome.parked)
    } finally {
      await parts.parked()
    }
  }
}

/** A session object that does not know whether its last write landed refuses to act on what it remembers. */
export function inDoubt(sessionId: string): HarnessError {
  return new HarnessError(
    'STORE_UNAVAILABLE',
    `Session ${JSON.stringify(sessionId)}: the outcome of an earlier write is still unknown and the store cannot be read back, so this host does not act on what it remembers. Try again when the store answers, or close the session (its wakeup stays, so a worker finishes it).`,
  )
}
