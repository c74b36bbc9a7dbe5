import type { StreamChunk } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import { readAll } from '../contract/read-all.js'
import type { LogEntry } from '../contract/types.js'
import { cancelOpenTurn } from './cancel-turn.js'
import type { Harness } from './harness.js'
import { lazyStream } from './lazy-stream.js'
import type { InputRecord, ParkedRecord } from './records.js'
import { sendTurn } from './send-turn.js'
import type { LocalDriver } from './local-drivers.js'
import type { Session, SessionArgs, TurnInput } from './session.js'
import { parkedCall, type SessionState, type TurnInputRef } from './session-fold.js'
import type { SessionLease } from './session-lease.js'
import { doneWithin, sessionParts, type WakeupOnStop, wakeupOnStop } from './session-parts.js'
import { recoverTurn } from './session-recovery.js'
import type { SessionRuntime } from './session-runtime.js'
import { type SessionStatus, statusOf } from './session-status.js'
import type { SessionWriter } from './session-writer.js'
import { TurnRun } from './turn-run.js'
import { inDoubt, runLife, type TurnRunBody } from './run-life.js'
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

/** A session this host drives: its lease, its writer, its wakeup policy, and one phase. */
export class LiveSession implements Session, LocalDriver {
  readonly id: string
  readonly harness: Harness
  #phase: Phase
  readonly #args: SessionArgs
  readonly #lease: SessionLease
  readonly #writer: SessionWriter
  readonly #wakeups: WakeupPolicy
  readonly #runtime: SessionRuntime
  /** The cancel this object is carrying out, if any: another open of the session here waits for it. */
  #cancelling: Promise<void> | undefined

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
    const cancelling = this.#cancelHeld(reason)
    this.#cancelling = cancelling
    await cancelling.finally(() => {
      if (this.#cancelling === cancelling) this.#cancelling = undefined
    })
  }

  async #cancelHeld(reason: string): Promise<void> {
    await this.#stopTurnRun('was cancelled')
    if (this.#writer.stopped) throw this.#writer.stopped
    if (!(await this.#writer.settle())) throw inDoubt(this.id)
    if (!this.#args.state.openTurn) return
    await cancelOpenTurn(this.#runtime, this.#args.store, reason)
    // The stop above may have let the session go meanwhile.
    if (!letGone(this.#phase)) this.#phase = { status: 'idle' }
    await this.#args.store.wakeups?.cancel(this.id)
  }

  handOff(): Promise<void> {
    // The tool in flight finishes its current step (or is abandoned after stopTimeoutMs); its next write is refused.
    return this.#end('was handed off for a deploy', 'hand off')
  }

  entries(): Promise<LogEntry[]> {
    return readAll(this.#args.store, this.id)
  }

  close(): Promise<void> {
    return this.#end('was closed', 'let go')
  }

  /** Another open of this session on this host takes over: as `close`, but the wakeup stays as it is. */
  giveWay(): Promise<void> {
    return this.#end('was opened again on this host', 'keep')
  }

  /** Stops a cancel in progress, then a run (waiting at most stopTimeoutMs for each), then lets the session go. */
  async #end(reason: string, wakeup: WakeupOnStop): Promise<void> {
    if (this.#phase.status === 'closed' || (wakeup === 'keep' && letGone(this.#phase))) return
    // A compensation in flight finishes first, as a run's step in flight does.
    if (this.#cancelling) await doneWithin(this.#cancelling, this.#args.timings.stopTimeoutMs)
    this.#writer.close(reason)
    await this.#stopTurnRun(reason)
    const parts = { writer: this.#writer, lease: this.#lease, wakeups: this.#wakeups, args: this.#args }
    const failure = letGone(this.#phase) || this.#writer.stopped ? undefined : await wakeupOnStop(parts, wakeup)
    await this.#letGo({ status: 'closed' })
    if (failure) throw failure
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

  /** One run's life (run-life.ts), and what it tells this object as it ends. */
  #drive(turnRun: TurnRun, body: TurnRunBody): AsyncGenerator<StreamChunk> {
    return runLife(
      {
        sessionId: this.id,
        writer: this.#writer,
        lease: this.#lease,
        wakeups: this.#wakeups,
        runtime: this.#runtime,
        finished: () => {
          this.#phase = { status: 'idle' }
        },
        parked: () => this.#letGo({ status: 'parked', held: false }),
        // A run that ended without parking or finishing leaves what the log says: a cut turn,
        // a waiting one (a send refused while the turn waits), or none (a resume with nothing to resume).
        ended: (outcome) => {
          if (runOf(this.#phase) === turnRun)
            this.#phase = outcome?.kind === 'deleted' ? { status: 'deleted' } : restingPhase(this.#args.state)
        },
      },
      turnRun,
      body,
    )
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

/**
 * Builds the live session object over a folded log and writes the first record of a new
 * session. The host has checked everything that can refuse the open, and holds the lease.
 */
export async function openSession(args: SessionArgs): Promise<LiveSession> {
  const session = new LiveSession(args)
  await session.create()
  return session
}
