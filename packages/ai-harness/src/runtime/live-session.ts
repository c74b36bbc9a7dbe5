import type { StreamChunk } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import { scrubError } from '../secrets/error-scrub.js'
import { guardAppends } from '../secrets/store-guard.js'
import { readAll } from '../contract/read-all.js'
import type { LogEntry } from '../contract/types.js'
import type { Harness } from './harness.js'
import type { InputRecord, LoggedMessage, ParkedRecord } from './records.js'
import type { Session, SessionArgs, SessionStatus, TurnInput } from './session.js'
import { agentMetaOf, childSessionId } from './agent-tool.js'
import { parkedCall, type TurnInputRef, unsettledCalls } from './session-fold.js'
import { SessionLease } from './session-lease.js'
import { recoverTurn } from './session-recovery.js'
import type { SessionRuntime } from './session-runtime.js'
import { SessionWriter } from './session-writer.js'
import type { GuardedStore } from './store-boundary.js'
import { after } from './timings.js'
import { beginTurnTrace, dropTurnTrace, traceStore } from './tracing.js'
import { TurnRun } from './turn-run.js'
import { chatTurn } from './turn-runner.js'
import { WakeupPolicy } from './wakeup-policy.js'
import { rollBackOnCancel } from './cancel-rollback.js'

/**
 * The life of a session object. `idle`, `cut` and `waiting` hold the lease with no
 * run; `running` has one run; `parked` (after a run parked) and `closed` have let the
 * lease go. Whether it may still write is the writer's: a conflict or a lost lease stops it.
 */
type Phase =
  | { readonly name: 'idle' | 'cut' | 'waiting' | 'parked' | 'closed' | 'deleted' }
  | { readonly name: 'running'; readonly turnRun: TurnRun }

const STATUS: Record<Phase['name'], SessionStatus> = {
  idle: 'idle',
  cut: 'cut',
  waiting: 'parked',
  running: 'running',
  parked: 'parked',
  closed: 'closed',
  deleted: 'deleted',
}

/** What a run of a turn does once the session may be driven: send a turn, or recover one. */
type TurnRunBody = (turnRun: TurnRun, runtime: SessionRuntime) => AsyncGenerator<StreamChunk>

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
    const { store, harness, sessionId, state, clock, timings } = args
    this.id = sessionId
    this.harness = harness
    this.#args = args
    this.#phase = { name: this.#restingPhase() }
    this.#lease = new SessionLease(store, sessionId, args.lease, {
      ...timings,
      clock,
      driving: () => this.#running() !== undefined,
      onLost: (error) => this.#writer.stop(error),
    })
    const scanner = args.sessionSecrets.scanner
    // Spans of the session's store calls, with its secrets kept out of their attributes.
    const traced = traceStore(store, { hostId: args.hostId, scanner }) as GuardedStore
    // Every append of the session passes the secret guard: a gap in a scan point fails instead of leaking.
    this.#writer = new SessionWriter(guardAppends(traced, scanner) as GuardedStore, sessionId, state, {
      lease: () => this.#lease.current,
      onStop: (error) => {
        this.#lease.stopRenewing(error)
        this.#running()?.abortController.abort()
      },
    })
    this.#wakeups = new WakeupPolicy(store, sessionId, state, clock)
    this.#runtime = {
      sessionId,
      harness,
      store: traced,
      state,
      writer: this.#writer,
      scanner,
      sessionSecrets: args.sessionSecrets,
      clock,
      secrets: new Map(Object.entries(args.secrets)),
      maxStepBytes: Math.min(harness.options.maxStepBytes ?? 64 * 1024, store.limits.maxRecordBytes),
      // Without wakeups nobody would wake a parked sleep: then every sleep waits in the process.
      parkAfterMs: store.wakeups ? (harness.options.parkAfterMs ?? 5_000) : Number.POSITIVE_INFINITY,
      leaseFresh: () => this.#lease.ensureFresh(),
      // Outside a run (none in practice: steps run in turns), an attempt writes through the session's writer.
      stepScope: () => ({ writer: this.#writer, release: () => {} }),
      openChild: args.openChild,
    }
  }

  /** Writes the first record of a session that has none. */
  async create(): Promise<void> {
    const { state, harness, clock, parent } = this.#args
    if (state.nextSeq === 1) {
      await this.#writer.append([{ type: 'harness.session.opened', harness: harness.name, at: clock.now(), parent }])
    }
  }

  get needsRecovery(): boolean {
    return this.#args.state.openTurn !== undefined
  }

  get status(): SessionStatus {
    return STATUS[this.#phase.name]
  }

  get parked(): ParkedRecord | undefined {
    return this.#args.state.openTurn ? parkedCall(this.#args.state) : undefined
  }

  send(input: TurnInput): AsyncIterable<StreamChunk> {
    return this.#startTurnRun((turnRun, runtime) => this.#sendTurn(turnRun, runtime, input))
  }

  /** Runs a prompt of the session's inbox (`host.submit`) as a turn that names it. */
  sendInput(input: InputRecord, inboxSeq: number): AsyncIterable<StreamChunk> {
    const ref: TurnInputRef = { inputId: input.inputId, inboxSeq }
    return this.#startTurnRun((turnRun, runtime) => this.#sendTurn(turnRun, runtime, input.messages, ref))
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
    if (this.#phase.name === 'parked') {
      // This object let the lease go when the turn parked; the cancel needs it again.
      const again = await this.#args.reopen()
      try {
        await again.cancel(reason)
      } finally {
        await again.close()
      }
      this.#phase = { name: 'closed' }
      return
    }
    this.#assertHeld()
    await this.#stopTurnRun('was cancelled')
    if (this.#writer.stopped) throw this.#writer.stopped
    if (!(await this.#writer.settle())) throw inDoubt(this.id)
    const open = this.#args.state.openTurn
    if (!open) return
    const kept = this.#runtime.scanner.redactText(typeof reason === 'string' ? reason : String(reason))
    // Seam (cancel-rollback.ts): the calls of the cancelled turn undo their finished steps (`undo`) first.
    await rollBackOnCancel(this.#runtime, (name) => this.harness.toolNamed(name), kept, open.turnId)
    await this.#cancelChildren()
    await this.#writer.append([{ type: 'harness.turn.cancelled', turnId: open.turnId, at: this.#args.clock.now(), reason: kept }])
    // The stop above may have let the session go meanwhile (TypeScript cannot see that).
    const phase = this.#phase.name as Phase['name']
    if (phase !== 'parked' && phase !== 'closed') this.#phase = { name: 'idle' }
    await this.#args.store.wakeups?.cancel(this.id)
  }

  /**
   * Ends the open turns of the children of this turn's unsettled agent calls, before the
   * turn itself ends: a child must not run on (ask, act, take an answer) for a call that
   * no longer waits for it. Deepest first, so a crash halfway leaves the rest still open.
   */
  async #cancelChildren(): Promise<void> {
    const { state, store } = this.#args
    for (const call of unsettledCalls(state)) {
      const agent = agentMetaOf(this.harness.toolNamed(call.name))
      if (!agent) continue
      const childId = childSessionId(this.id, call.id)
      // A child that never wrote its log never ran: opening it would create it.
      if ((await store.read(childId, { after: 0, limit: 1 })).length === 0) continue
      const child = await this.#runtime.openChild(agent.harness, childId, { sessionId: this.id, toolCallId: call.id })
      try {
        if (child.needsRecovery) await child.cancel('The agent call that ran this session ended without waiting for it.')
      } finally {
        await child.close()
      }
    }
  }

  async handOff(): Promise<void> {
    if (this.#phase.name === 'closed') return
    // The tool in flight finishes its current step (or is abandoned after stopTimeoutMs); its next write is refused.
    this.#writer.close('was handed off for a deploy')
    await this.#stopTurnRun('was handed off for a deploy')
    let failure: unknown
    if (this.#phase.name !== 'parked' && !this.#writer.stopped) {
      try {
        const known = await this.#settled()
        if (!this.#writer.stopped && (!known || this.#args.state.openTurn)) {
          await this.#lease.confirm()
          await this.#wakeups.dueNow()
        }
      } catch (error) {
        // The wakeup at the lease's expiry stays: a worker takes the turn over then.
        failure = error
      }
    }
    await this.#letGo('closed')
    if (failure) throw failure
  }

  entries(): Promise<LogEntry[]> {
    return readAll(this.#args.store, this.id)
  }

  async close(): Promise<void> {
    if (this.#phase.name === 'closed') return
    this.#writer.close('was closed')
    await this.#stopTurnRun('was closed')
    if (this.#phase.name !== 'parked' && !this.#writer.stopped) {
      // After a write whose outcome is unknown, the wakeup stays: a worker looks at the log.
      const known = await this.#settled()
      if (!this.#writer.stopped) await this.#wakeups.letGo(known, { wakeParent: this.#args.wakeParentWhenIdle }).catch(() => {})
    }
    await this.#letGo('closed')
  }

  /** The phase of a held session with no run, from the log's state: a waiting turn, a cut one, or none. */
  #restingPhase(): 'idle' | 'cut' | 'waiting' {
    const { state } = this.#args
    return state.openTurn ? (parkedCall(state) ? 'waiting' : 'cut') : 'idle'
  }

  #running(): TurnRun | undefined {
    return this.#phase.name === 'running' ? this.#phase.turnRun : undefined
  }

  /** Refuses to act for a session this object let go. */
  #assertHeld(): void {
    const { name } = this.#phase
    if (name === 'parked' || name === 'closed')
      throw new HarnessError(
        'INVALID_ARGUMENT',
        name === 'parked'
          ? 'This session parked and let its lease go (it waits for a wake time or an answer); open it again with host.open({ sessionId }) to drive it.'
          : 'This session is closed; open it again with host.open({ sessionId }).',
      )
  }

  /** Refuses to drive a session this object let go, one whose writer stopped, or one already running. */
  #assertMayDrive(): void {
    this.#assertHeld()
    if (this.#writer.stopped) throw this.#writer.stopped
    if (this.#phase.name === 'running')
      throw new HarnessError('SESSION_BUSY', 'A turn of this session is still running; wait for its stream to end before sending again.')
  }

  /** Streams one run of a turn; the run starts when the stream is first read. */
  #startTurnRun(body: TurnRunBody): AsyncIterable<StreamChunk> {
    return {
      [Symbol.asyncIterator]: () => {
        let stream: AsyncIterator<StreamChunk> | undefined
        const start = () => {
          this.#assertMayDrive()
          const turnRun = new TurnRun(this.#writer.scope(), () => this.#writer.stopped)
          this.#phase = { name: 'running', turnRun }
          return turnRun.stream(this.#drive(turnRun, body))
        }
        return {
          next: () => {
            try {
              stream ??= start()
            } catch (error) {
              return Promise.reject(error)
            }
            return stream.next()
          },
          return: async () => (stream?.return ? stream.return() : { done: true, value: undefined }),
        }
      },
    }
  }

  /** Before a run writes, the log's state is known, the lease confirmed and the wakeup at its expiry. */
  async *#drive(turnRun: TurnRun, body: TurnRunBody): AsyncGenerator<StreamChunk> {
    try {
      if (!(await this.#writer.settle())) throw inDoubt(this.id)
      await this.#lease.confirm()
      await this.#lease.keepWakeupAtExpiry()
      yield* body(turnRun, { ...this.#runtime, writer: turnRun.writer, stepScope: () => turnRun.stepScope() })
      if (!turnRun.abandoned) await this.#afterTurnRun(turnRun)
    } catch (error) {
      // No secret leaves the session in an error message either (a model's or a tool's error text).
      throw scrubError(this.#runtime.scanner, error)
    } finally {
      // A run that ended without parking or finishing leaves what the log says: a cut turn,
      // a waiting one (a send refused while the turn waits), or none (a resume with nothing to resume).
      if (this.#running() === turnRun) this.#phase = { name: turnRun.outcome?.kind === 'deleted' ? 'deleted' : this.#restingPhase() }
      turnRun.finish()
    }
  }

  /** After a run: where the wakeup goes, and whether the host lets the session go. */
  async #afterTurnRun(turnRun: TurnRun): Promise<void> {
    const outcome = turnRun.outcome
    if (outcome?.kind === 'finished') {
      this.#phase = { name: 'idle' }
      await this.#wakeups.finished()
    } else if (outcome?.kind === 'parked') {
      // A parked session is free for whoever resumes it: a worker at the wake time, or the host that answers.
      try {
        await this.#wakeups.parked(outcome.parked)
      } finally {
        await this.#letGo('parked')
      }
    }
  }

  async *#sendTurn(turnRun: TurnRun, runtime: SessionRuntime, input: TurnInput, ref?: TurnInputRef): AsyncGenerator<StreamChunk> {
    const { state, clock, hostId } = this.#args
    const { scanner } = this.#runtime
    if (state.openTurn) {
      yield* this.#recover(turnRun, runtime)
      const waiting = parkedCall(state)
      if (state.openTurn && waiting) throw waitingTurn(waiting)
      if (state.openTurn) return
    }
    const turnId = crypto.randomUUID()
    const messages = toMessages(input)
    for (const [i, m] of messages.entries()) {
      const secret = scanner.find(m)
      if (secret)
        throw new HarnessError(
          'RECORD_SECRET',
          `Prompt message ${i} holds a secret of the session at ${secret.path}; send it without the secret.`,
        )
    }
    const trace = await beginTurnTrace(runtime, turnId, hostId)
    try {
      await runtime.writer.append([
        {
          type: 'harness.turn.started',
          turnId,
          messages,
          at: clock.now(),
          host: hostId,
          fence: this.#lease.fence,
          ...(ref ? { input: { ...ref } } : {}),
          ...trace,
        },
      ])
    } catch (error) {
      // No run takes the turn's span: it ends here, failed, rather than never.
      dropTurnTrace(runtime, turnId, error)
      throw error
    }
    yield* chatTurn(runtime, turnId, turnRun)
  }

  #recover(turnRun: TurnRun, runtime: SessionRuntime): AsyncGenerator<StreamChunk> {
    return recoverTurn(runtime, turnRun, {
      host: this.#args.hostId,
      fence: this.#lease.fence,
      wakeups: this.#wakeups,
      deferToParent: this.#args.wakeParentWhenIdle,
    })
  }

  /** Stops a running turn, waiting at most stopTimeoutMs; its scope writes nothing more either way. */
  async #stopTurnRun(reason: string): Promise<void> {
    const turnRun = this.#running()
    if (!turnRun) return
    await turnRun.stop(reason, this.#args.timings.stopTimeoutMs)
    if (this.#running() === turnRun) this.#phase = { name: 'cut' }
  }

  /** Whether the log's state is known, waiting at most stopTimeoutMs behind a write in flight. */
  async #settled(): Promise<boolean> {
    let cancel = () => {}
    const known = await Promise.race([
      this.#writer.settle().catch(() => false),
      new Promise<boolean>((resolve) => {
        cancel = after(this.#args.timings.stopTimeoutMs, () => resolve(false))
      }),
    ])
    cancel()
    return known
  }

  async #letGo(next: 'parked' | 'closed'): Promise<void> {
    this.#phase = { name: next }
    const released = this.#lease.release()
    // Nothing queued may write after the lease is gone (a batch in doubt is left to the next host).
    this.#writer.stop(
      new HarnessError('LEASE_LOST', `Session ${JSON.stringify(this.id)} was let go by this host; open it again to drive it.`),
    )
    await released
    this.#args.onClosed()
  }
}

function waitingTurn(waiting: ParkedRecord): HarnessError {
  // Dropping the prompt silently would lose it: say what the turn waits for.
  const what = {
    ask: 'for an answer to its question',
    sleep: 'in a durable sleep',
    agent: 'for a child agent',
    approval: 'for the approval of a tool call',
  }[waiting.reason]
  return new HarnessError(
    'SESSION_BUSY',
    `The session's open turn waits (${what}). Answer the question or decide the approval (host.approve), let a worker resume it, or cancel the turn (session.cancel()) before sending a new prompt.`,
  )
}

function inDoubt(sessionId: string): HarnessError {
  return new HarnessError(
    'STORE_UNAVAILABLE',
    `Session ${JSON.stringify(sessionId)}: the outcome of an earlier write is still unknown and the store cannot be read back, so this host does not act on what it remembers. Try again when the store answers, or close the session (its wakeup stays, so a worker finishes it).`,
  )
}

export function toMessages(input: TurnInput): LoggedMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  const list = Array.isArray(input) ? input : [input]
  return list.map((m) => ({ ...m }))
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
