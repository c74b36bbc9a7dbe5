import { randomUUID } from 'node:crypto'
import type { StreamChunk } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import { readAll } from '../contract/read-all.js'
import type { Clock, Lease, LogEntry } from '../contract/types.js'
import { SecretScanner } from '../secrets/secret-scanner.js'
import type { Harness } from './harness.js'
import type { LoggedMessage, ParkedRecord } from './records.js'
import { parkedCall, type SessionState } from './session-fold.js'
import { SessionLease } from './session-lease.js'
import { recoverTurn } from './session-recovery.js'
import type { SessionRuntime } from './session-runtime.js'
import { SessionWriter } from './session-writer.js'
import type { GuardedStore } from './store-boundary.js'
import { after, type RuntimeTimings } from './timings.js'
import { TurnRun } from './turn-run.js'
import { runTurn } from './turn-runner.js'
import { WakeupPolicy } from './wakeup-policy.js'

/** A prompt: text, or TanStack AI model messages. */
export type TurnInput = string | LoggedMessage | LoggedMessage[]

/** What a session is doing, as far as this host knows. */
export type SessionStatus = 'idle' | 'running' | 'cut' | 'parked' | 'closed'

/** An open session: one host drives it until `close()`. */
export interface Session {
  readonly id: string
  readonly harness: Harness
  /** True when the session's last turn is open: cut by a crash, stopped for a deploy, or waiting. */
  readonly needsRecovery: boolean
  readonly status: SessionStatus
  /** Why the open turn waits (a long sleep, a question), if it does. */
  readonly parked: ParkedRecord | undefined
  /** Sends a prompt and streams the TanStack AI chunks of the turn. A cut turn is resumed first. */
  send(input: TurnInput): AsyncIterable<StreamChunk>
  /** Finishes an open turn by the replay rules; yields nothing when there is none, or when it still waits. */
  resume(): AsyncIterable<StreamChunk>
  /**
   * Ends the open turn as cancelled: it is not resumed. Stops a running turn first, waiting
   * at most the host's `stopTimeoutMs` for a step in flight.
   */
  cancel(reason?: string): Promise<void>
  /**
   * Stops a running turn for a deploy (waiting at most `stopTimeoutMs` for a step in
   * flight) and lets the session go: the turn stays open and any host or worker resumes it at once.
   */
  handOff(): Promise<void>
  /** The whole log, harness and app records. */
  entries(): Promise<LogEntry[]>
  /** Releases the session for other hosts. Stops a running turn first, waiting at most `stopTimeoutMs`. */
  close(): Promise<void>
}

export interface SessionArgs {
  store: GuardedStore
  harness: Harness
  sessionId: string
  state: SessionState
  scanner: SecretScanner
  secrets: Record<string, string>
  clock: Clock
  lease: Lease | undefined
  timings: RuntimeTimings
  parent: { sessionId: string; toolCallId: string } | null
  /** The readable id written in turn records; the lease's owner also names this process instance. */
  hostId: string
  /** A worker opened the session to look at it: if its agent turn finished, it wakes the parent. */
  wakeParentWhenIdle: boolean
  onClosed: () => void
  openChild: SessionRuntime['openChild']
}

/**
 * The life of a session object. `idle`, `cut` and `waiting` hold the lease with no
 * run; `running` has one run; `parked` (after a run parked) and `closed` have let the
 * lease go. Whether it may still write is the writer's: a conflict or a lost lease stops it.
 */
type Phase = { readonly name: 'idle' | 'cut' | 'waiting' | 'parked' | 'closed' } | { readonly name: 'running'; readonly run: TurnRun }

const STATUS: Record<Phase['name'], SessionStatus> = {
  idle: 'idle',
  cut: 'cut',
  waiting: 'parked',
  running: 'running',
  parked: 'parked',
  closed: 'closed',
}

/** The secrets of a session, checked before anything is written. */
export function sessionScanner(secrets: Record<string, string>): SecretScanner {
  const scanner = new SecretScanner()
  for (const [name, value] of Object.entries(secrets)) {
    try {
      scanner.add(value)
    } catch (error) {
      throw new HarnessError('SECRET_TOO_SHORT', `Secret ${JSON.stringify(name)}: ${(error as Error).message}`)
    }
  }
  return scanner
}

/** Builds the live session object over a folded log. The host has checked everything and acquired the lease. */
export async function openSession(args: SessionArgs): Promise<Session> {
  const { store, harness, sessionId, state, clock, timings } = args
  let phase: Phase = { name: state.openTurn ? (parkedCall(state) ? 'waiting' : 'cut') : 'idle' }
  const running = () => (phase.name === 'running' ? phase.run : undefined)
  const lease = new SessionLease(store, sessionId, args.lease, {
    ...timings,
    clock,
    driving: () => running() !== undefined,
    onLost: (error) => writer.stop(error),
  })
  const writer = new SessionWriter(store, sessionId, state, {
    lease: () => lease.current,
    onStop: (error) => {
      lease.stopRenewing(error)
      running()?.abortController.abort()
    },
  })
  const wakeups = new WakeupPolicy(store, sessionId, state, clock)
  const runtime: SessionRuntime = {
    logId: sessionId,
    harness,
    store,
    state,
    writer,
    scanner: args.scanner,
    clock,
    secrets: new Map(Object.entries(args.secrets)),
    maxStepBytes: Math.min(harness.options.maxStepBytes ?? 64 * 1024, store.limits.maxRecordBytes),
    // Without wakeups nobody would wake a parked sleep: then every sleep waits in the process.
    parkAfterMs: store.wakeups ? (harness.options.parkAfterMs ?? 5_000) : Number.POSITIVE_INFINITY,
    openChild: args.openChild,
  }
  if (state.nextSeq === 1) {
    await writer.append([{ type: 'harness.session.opened', harness: harness.name, at: clock.now(), parent: args.parent }])
  }

  /** Refuses to drive a session this object let go, one whose writer stopped, or one already running. */
  const assertMayDrive = () => {
    if (phase.name === 'parked' || phase.name === 'closed')
      throw new HarnessError(
        'INVALID_ARGUMENT',
        phase.name === 'parked'
          ? 'This session parked and let its lease go (it waits for a wake time or an answer); open it again with host.open({ sessionId }) to drive it.'
          : 'This session is closed; open it again with host.open({ sessionId }).',
      )
    if (writer.stopped) throw writer.stopped
    if (phase.name === 'running')
      throw new HarnessError('SESSION_BUSY', 'A turn of this session is still running; wait for its stream to end before sending again.')
  }

  const letGo = async (next: 'parked' | 'closed') => {
    phase = { name: next }
    const released = lease.release()
    // Nothing queued may write after the lease is gone (a batch in doubt is left to the next host).
    writer.stop(new HarnessError('LEASE_LOST', `Session ${JSON.stringify(sessionId)} was let go by this host; open it again to drive it.`))
    await released
    args.onClosed()
  }

  /** Whether the log's state is known, waiting at most stopTimeoutMs behind a write in flight. */
  const settled = async () => {
    if (writer.stopped) return false
    let cancel = () => {}
    const known = await Promise.race([
      writer.settle().catch(() => false),
      new Promise<boolean>((resolve) => {
        cancel = after(timings.stopTimeoutMs, () => resolve(false))
      }),
    ])
    cancel()
    return known
  }

  /** After a run: where the wakeup goes, and whether the host lets the session go. */
  const afterRun = async (turn: TurnRun) => {
    const outcome = turn.outcome
    if (!outcome) return
    if (outcome.kind === 'finished') {
      phase = { name: 'idle' }
      await wakeups.finished()
    } else if (outcome.kind === 'parked') {
      // A parked session is free for whoever resumes it: a worker at the wake time, or the host that answers.
      try {
        await wakeups.parked(outcome.parked)
      } finally {
        await letGo('parked')
      }
    }
  }

  /** Streams one run of a turn. Before it writes, the log's state is known, the lease confirmed and the wakeup at its expiry. */
  const run = (body: (turn: TurnRun, runtime: SessionRuntime) => AsyncGenerator<StreamChunk>): AsyncIterable<StreamChunk> => ({
    [Symbol.asyncIterator]() {
      let stream: AsyncIterator<StreamChunk> | undefined
      const start = () => {
        assertMayDrive()
        const turn = new TurnRun(writer.scope(), () => writer.stopped)
        phase = { name: 'running', run: turn }
        return turn.stream(drive(turn, body))
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
  })

  async function* drive(turn: TurnRun, body: (turn: TurnRun, runtime: SessionRuntime) => AsyncGenerator<StreamChunk>) {
    try {
      if (!(await writer.settle())) throw writerInDoubt(sessionId)
      await lease.confirm()
      await lease.keepWakeupAtExpiry()
      yield* body(turn, { ...runtime, writer: turn.writer })
      if (!turn.abandoned) await afterRun(turn)
    } finally {
      if (phase.name === 'running' && phase.run === turn) phase = { name: 'cut' }
      turn.finish()
    }
  }

  /** Stops a running turn, waiting at most stopTimeoutMs; its scope writes nothing more either way. */
  const stopRun = async (reason: string) => {
    const turn = running()
    if (turn) await turn.stop(reason, timings.stopTimeoutMs)
    if (phase.name === 'running' && phase.run === turn) phase = { name: 'cut' }
  }

  const recover = (turn: TurnRun, rt: SessionRuntime) => recoverTurn(rt, turn, { host: args.hostId, fence: lease.fence, wakeups })

  const session: Session = {
    id: sessionId,
    harness,
    get needsRecovery() {
      return state.openTurn !== undefined
    },
    get status() {
      return STATUS[phase.name]
    },
    get parked() {
      return state.openTurn ? parkedCall(state) : undefined
    },
    send(input) {
      return run(async function* (turn, rt) {
        if (state.openTurn) {
          yield* recover(turn, rt)
          const waiting = parkedCall(state)
          if (state.openTurn && waiting) {
            // Dropping the prompt silently would lose it: say what the turn waits for.
            throw new HarnessError(
              'SESSION_BUSY',
              `The session's open turn waits (${waiting.reason === 'ask' ? 'for an answer to its question' : waiting.reason === 'sleep' ? 'in a durable sleep' : 'for a child agent'}). Answer the question, let a worker resume it, or cancel the turn (session.cancel()) before sending a new prompt.`,
            )
          }
          if (state.openTurn) return
        }
        const turnId = randomUUID()
        const messages = toMessages(input)
        for (const [i, m] of messages.entries()) {
          const secret = args.scanner.find(m)
          if (secret)
            throw new HarnessError(
              'RECORD_SECRET',
              `Prompt message ${i} holds a secret of the session at ${secret.path}; send it without the secret.`,
            )
        }
        await rt.writer.append([{ type: 'harness.turn.started', turnId, messages, at: clock.now(), host: args.hostId, fence: lease.fence }])
        yield* runTurn(rt, turnId, turn)
      })
    },
    resume() {
      return run(recover)
    },
    async cancel(reason = 'cancelled by the user') {
      await stopRun('was cancelled')
      if (writer.stopped) throw writer.stopped
      if (!(await writer.settle())) throw writerInDoubt(sessionId)
      const open = state.openTurn
      if (!open) return
      await writer.append([{ type: 'harness.turn.cancelled', turnId: open.turnId, at: clock.now(), reason }])
      if (phase.name !== 'parked' && phase.name !== 'closed') phase = { name: 'idle' }
      await store.wakeups?.cancel(sessionId)
    },
    async handOff() {
      if (phase.name === 'closed') return
      // The tool in flight finishes its current step (or is abandoned after stopTimeoutMs); its next write is refused.
      writer.close('was handed off for a deploy')
      await stopRun('was handed off for a deploy')
      let failure: unknown
      if (!writer.stopped && phase.name !== 'parked') {
        try {
          const known = await settled()
          if (writer.stopped) {
            // Another writer got there: nothing more from this host.
          } else if (!known || state.openTurn) {
            await lease.confirm()
            await wakeups.dueNow()
          }
        } catch (error) {
          // The wakeup at the lease's expiry stays: a worker takes the turn over then.
          failure = error
        }
      }
      await letGo('closed')
      if (failure) throw failure
    },
    entries: () => readAll(store, sessionId),
    async close() {
      if (phase.name === 'closed') return
      writer.close('was closed')
      await stopRun('was closed')
      if (!writer.stopped && phase.name !== 'parked') {
        // After a write whose outcome is unknown, the wakeup stays: a worker looks at the log.
        const known = await settled()
        if (!writer.stopped) await wakeups.letGo(known, { wakeParent: args.wakeParentWhenIdle }).catch(() => {})
      }
      await letGo('closed')
    },
  }
  return session
}

function writerInDoubt(sessionId: string): HarnessError {
  return new HarnessError(
    'STORE_UNAVAILABLE',
    `Session ${JSON.stringify(sessionId)}: the outcome of an earlier write is still unknown and the store cannot be read back, so this host does not act on what it remembers. Try again when the store answers, or close the session (its wakeup stays, so a worker finishes it).`,
  )
}

function toMessages(input: TurnInput): LoggedMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  const list = Array.isArray(input) ? input : [input]
  return list.map((m) => ({ ...m }))
}
