import type { StreamChunk } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import { readAll } from '../contract/read-all.js'
import type { LogEntry } from '../contract/types.js'
import { scrubError } from '../secrets/error-scrub.js'
import { cancelOpenTurn } from './cancel-turn.js'
import type { Harness } from './harness.js'
import { lazyStream } from './lazy-stream.js'
import type { InputRecord, ParkedRecord } from './records.js'
import { sendTurn } from './send-turn.js'
import type { Session, SessionArgs, TurnInput } from './session.js'
import { parkedCall, type SessionState, type TurnInputRef } from './session-fold.js'
import type { SessionLease } from './session-lease.js'
import { handOffWakeup, sessionParts, settledWithin } from './session-parts.js'
import { recoverTurn } from './session-recovery.js'
import type { SessionRuntime } from './session-runtime.js'
import { type SessionStatus, statusOf } from './session-status.js'
import type { SessionWriter } from './session-writer.js'
import { TurnRun, type TurnRunEnd, type TurnRunOutcome, type TurnRunStream } from './turn-run.js'
import type { WakeupPolicy } from './wakeup-policy.js'

/**
 * The life of a session object, in the words of its status. `idle`, `cut` and a `parked`
 * turn that still holds the lease (`held`: opened while it waits, or a send refused) have
 * no run; `running` has one; a `parked` that let the lease go (after its run parked) and
 * `closed` hold nothing. Whether it may still write is the writer's: a conflict or a lost
 * lease stops it.
 */
type Phase =
  | { readonly status: 'idle' | 'cut' | 'closed' | 'deleted' }
  | { readonly status: 'parked'; readonly held: boolean }
  | { readonly status: 'running'; readonly turnRun: TurnRun }

/** The phase of a held session with no run, from what its log says (`statusOf`). */
function restingPhase(state: SessionState): Phase {
  const status = statusOf(state)
  return status === 'parked' ? { status, held: true } : { status }
}

/** The run of a `running` phase. */
const runOf = (phase: Phase): TurnRun | undefined => (phase.status === 'running' ? phase.turnRun : undefined)

/** Whether a session object let the session go: it parked and gave up the lease, or it is closed. */
const letGone = (phase: Phase): boolean => phase.status === 'closed' || (phase.status === 'parked' && !phase.held)

/** What a run of a turn does once the session may be driven: send a turn, or recover one. */
type TurnRunBody = (turnRun: TurnRun, runtime: SessionRuntime) => TurnRunStream

/** The last chunks of a run that ended (a question, approvals, the park), then the error its stream ends with, if any. */
async function* tailOf(end: TurnRunEnd | undefined): AsyncGenerator<StreamChunk> {
  if (end) yield* end.tail
  if (end?.error !== undefined) throw end.error
}

/** A session this host drives: its lease, its writer, its wakeup policy, and one phase. */
export class LiveSession implements Session {
  readonly id: string
  readonly harness: Harness
  #phase: Phase
  readonly #args: SessionArgs
  readonly #lease: SessionLease
  readonly #writer: SessionWriter
  readonly #wakeups: WakeupPolicy
  readonly #runtime: SessionRuntime

  constructor(args: SessionArgs) {
    this.id = args.sessionId
    this.harness = args.harness
    this.#args = args
    this.#phase = restingPhase(this.#args.state)
    ;({
      lease: this.#lease,
      writer: this.#writer,
      wakeups: this.#wakeups,
      runtime: this.#runtime,
    } = sessionParts(args, () => runOf(this.#phase)))
  }

  /** Writes the first record of a session that has none. */
  async create(): Promise<void> {
    const { state, harness, clock, parent } = this.#args
    if (state.nextSeq === 1) await this.#writer.append([{ type: 'harness.session.opened', harness: harness.name, at: clock.now(), parent }])
  }

  get needsRecovery(): boolean {
    return this.#args.state.openTurn !== undefined
  }

  get status(): SessionStatus {
    return this.#phase.status
  }

  get parked(): ParkedRecord | undefined {
    return this.#args.state.openTurn ? parkedCall(this.#args.state) : undefined
  }

  send(input: TurnInput): AsyncIterable<StreamChunk> {
    return this.#sendTurn(input)
  }

  /** Runs a prompt of the session's inbox (`host.submit`) as a turn that names it. */
  sendInput(input: InputRecord, inboxSeq: number): AsyncIterable<StreamChunk> {
    return this.#sendTurn(input.messages, { inputId: input.inputId, inboxSeq })
  }

  /** What the drive loop reads: the inbox seq taken so far, and the submitted prompt of the open turn. */
  get inbox(): { readonly taken: number; readonly openInput: TurnInputRef | undefined; readonly open: boolean } {
    const { state } = this.#args
    return { taken: state.inboxSeq, openInput: state.openTurn?.input, open: state.openTurn !== undefined }
  }

  resume(): AsyncIterable<StreamChunk> {
    return this.#startTurnRun((turnRun, runtime) => this.#recover(turnRun, runtime))
  }

  async cancel(reason = 'cancelled by the user'): Promise<void> {
    if (this.#phase.status === 'parked' && !this.#phase.held) {
      // This object let the lease go when the turn parked; the cancel needs it again.
      await cancelReopened(await this.#args.reopen(), reason)
      this.#phase = { status: 'closed' }
      return
    }
    this.#assertHeld()
    await this.#stopTurnRun('was cancelled')
    if (this.#writer.stopped) throw this.#writer.stopped
    if (!(await this.#writer.settle())) throw inDoubt(this.id)
    if (!this.#args.state.openTurn) return
    await cancelOpenTurn(this.#runtime, this.#args.store, reason)
    // The stop above may have let the session go meanwhile.
    if (!letGone(this.#phase)) this.#phase = { status: 'idle' }
    await this.#args.store.wakeups?.cancel(this.id)
  }

  async handOff(): Promise<void> {
    if (this.#phase.status === 'closed') return
    // The tool in flight finishes its current step (or is abandoned after stopTimeoutMs); its next write is refused.
    this.#writer.close('was handed off for a deploy')
    await this.#stopTurnRun('was handed off for a deploy')
    const { state, timings } = this.#args
    const failure =
      letGone(this.#phase) || this.#writer.stopped
        ? undefined
        : await handOffWakeup(this.#writer, this.#lease, this.#wakeups, state, timings.stopTimeoutMs)
    await this.#letGo({ status: 'closed' })
    if (failure) throw failure
  }

  entries(): Promise<LogEntry[]> {
    return readAll(this.#args.store, this.id)
  }

  async close(): Promise<void> {
    if (this.#phase.status === 'closed') return
    this.#writer.close('was closed')
    await this.#stopTurnRun('was closed')
    if (!letGone(this.#phase) && !this.#writer.stopped) {
      // After a write whose outcome is unknown, the wakeup stays: a worker looks at the log.
      const known = await settledWithin(this.#writer, this.#args.timings.stopTimeoutMs)
      if (!this.#writer.stopped) await this.#wakeups.letGo(known, { wakeParent: this.#args.wakeParentWhenIdle }).catch(() => {})
    }
    await this.#letGo({ status: 'closed' })
  }

  /** Refuses to act for a session this object let go. */
  #assertHeld(): void {
    if (letGone(this.#phase)) throw letGoneError(this.#phase.status === 'parked')
  }

  /** Refuses to drive a session this object let go, one whose writer stopped, or one already running. */
  #assertMayDrive(): void {
    this.#assertHeld()
    if (this.#writer.stopped) throw this.#writer.stopped
    if (this.#phase.status === 'running')
      throw new HarnessError('SESSION_BUSY', 'A turn of this session is still running; wait for its stream to end before sending again.')
  }

  /** Streams one run of a turn; the run starts when the stream is first read. */
  #startTurnRun(body: TurnRunBody): AsyncIterable<StreamChunk> {
    return lazyStream(() => {
      this.#assertMayDrive()
      const turnRun = new TurnRun(this.#writer.scope(), () => this.#writer.stopped)
      this.#phase = { status: 'running', turnRun }
      return turnRun.stream(this.#drive(turnRun, body))
    })
  }

  /** Before a run writes, the log's state is known, the lease confirmed and the wakeup at its expiry. */
  async *#drive(turnRun: TurnRun, body: TurnRunBody): AsyncGenerator<StreamChunk> {
    // How the run ended, as it returned it: kept before its tail streams (see `TurnRunEnd`).
    let outcome: TurnRunOutcome | undefined
    try {
      if (!(await this.#writer.settle())) throw inDoubt(this.id)
      await this.#lease.confirm()
      await this.#lease.keepWakeupAtExpiry()
      const end = yield* body(turnRun, { ...this.#runtime, writer: turnRun.writer, stepScope: () => turnRun.stepScope() })
      outcome = end?.outcome
      yield* tailOf(end)
      if (!turnRun.abandoned) await this.#afterTurnRun(outcome)
    } catch (error) {
      // No secret leaves the session in an error message either (a model's or a tool's error text).
      throw scrubError(this.#runtime.scanner, error)
    } finally {
      // A run that ended without parking or finishing leaves what the log says: a cut turn,
      // a waiting one (a send refused while the turn waits), or none (a resume with nothing to resume).
      if (runOf(this.#phase) === turnRun) this.#phase = outcome?.kind === 'deleted' ? { status: 'deleted' } : restingPhase(this.#args.state)
      turnRun.finish()
    }
  }

  /** After a run: where the wakeup goes, and whether the host lets the session go. */
  async #afterTurnRun(outcome: TurnRunOutcome | undefined): Promise<void> {
    if (outcome?.kind === 'finished') {
      this.#phase = { status: 'idle' }
      await this.#wakeups.finished()
    } else if (outcome?.kind === 'parked') {
      // A parked session is free for whoever resumes it: a worker at the wake time, or the host that answers.
      try {
        await this.#wakeups.parked(outcome.parked)
      } finally {
        await this.#letGo({ status: 'parked', held: false })
      }
    }
  }

  #sendTurn(input: TurnInput, ref?: TurnInputRef): AsyncIterable<StreamChunk> {
    const { hostId } = this.#args
    return this.#startTurnRun((turnRun, runtime) =>
      sendTurn(runtime, turnRun, { input, ref, hostId, fence: this.#lease.fence, recover: () => this.#recover(turnRun, runtime) }),
    )
  }

  #recover(turnRun: TurnRun, runtime: SessionRuntime): AsyncGenerator<StreamChunk> {
    const { hostId: host, wakeParentWhenIdle: deferToParent } = this.#args
    return recoverTurn(runtime, turnRun, { host, fence: this.#lease.fence, wakeups: this.#wakeups, deferToParent })
  }

  /** Stops a running turn, waiting at most stopTimeoutMs; its scope writes nothing more either way. */
  async #stopTurnRun(reason: string): Promise<void> {
    const turnRun = runOf(this.#phase)
    if (!turnRun) return
    await turnRun.stop(reason, this.#args.timings.stopTimeoutMs)
    if (runOf(this.#phase) === turnRun) this.#phase = { status: 'cut' }
  }

  async #letGo(next: Phase & { status: 'parked' | 'closed' }): Promise<void> {
    this.#phase = next
    const released = this.#lease.release()
    // Nothing queued may write after the lease is gone (a batch in doubt is left to the next host).
    this.#writer.stop(
      new HarnessError('LEASE_LOST', `Session ${JSON.stringify(this.id)} was let go by this host; open it again to drive it.`),
    )
    await released
    this.#args.onClosed()
  }
}

/** Cancels the open turn on a session object opened again for it, and lets that object go. */
async function cancelReopened(again: Session, reason: string): Promise<void> {
  try {
    await again.cancel(reason)
  } finally {
    await again.close()
  }
}

function letGoneError(parked: boolean): HarnessError {
  return new HarnessError(
    'INVALID_ARGUMENT',
    parked
      ? 'This session parked and let its lease go (it waits for a wake time or an answer); open it again with host.open({ sessionId }) to drive it.'
      : 'This session is closed; open it again with host.open({ sessionId }).',
  )
}

function inDoubt(sessionId: string): HarnessError {
  return new HarnessError(
    'STORE_UNAVAILABLE',
    `Session ${JSON.stringify(sessionId)}: the outcome of an earlier write is still unknown and the store cannot be read back, so this host does not act on what it remembers. Try again when the store answers, or close the session (its wakeup stays, so a worker finishes it).`,
  )
}

/**
 * Builds the live session object over a folded log and writes the first record of a new
 * session. The host has checked everything that can refuse the open, and holds the lease.
 */
export async function openSession(args: SessionArgs): Promise<Session> {
  const session = new LiveSession(args)
  await session.create()
  return session
}
