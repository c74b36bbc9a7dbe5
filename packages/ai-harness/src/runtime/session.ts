import { randomUUID } from 'node:crypto'
import type { StreamChunk } from '@tanstack/ai'
import { HarnessError, isHarnessError, type LogConflictError } from '../contract/errors.js'
import { readAll } from '../contract/read-all.js'
import type { Clock, HarnessStore, Lease, LogEntry } from '../contract/types.js'
import { scrubError } from '../secrets/error-scrub.js'
import { SessionSecrets } from '../secrets/session-secrets.js'
import { guardAppends } from '../secrets/store-guard.js'
import type { Harness } from './harness.js'
import type { LoggedMessage, ParkedRecord, ToolResultRecord } from './records.js'
import { parkedCall, type SessionState, unsettledCalls } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import { SessionWriter } from './session-writer.js'
import { type RunOutcome, runTurn } from './turn-runner.js'

/** A prompt: text, or TanStack AI model messages. */
export type TurnInput = string | LoggedMessage | LoggedMessage[]

/**
 * What a session is doing, as far as this host knows. `deleted`: its log was deleted
 * while this host drove it; this object writes nothing more.
 */
export type SessionStatus = 'idle' | 'running' | 'cut' | 'parked' | 'closed' | 'deleted'

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
  /** Ends the open turn as cancelled: it is not resumed. Stops a running turn first. */
  cancel(reason?: string): Promise<void>
  /** Stops a running turn for a deploy: the turn stays open and any host or worker resumes it at once. */
  handOff(): Promise<void>
  /** The whole log, harness and app records. */
  entries(): Promise<LogEntry[]>
  /** Releases the session for other hosts. */
  close(): Promise<void>
}

export interface SessionArgs {
  store: HarnessStore
  harness: Harness
  sessionId: string
  state: SessionState
  secrets: Record<string, string>
  clock: Clock
  lease: Lease | undefined
  leaseMs: number
  parent: { sessionId: string; toolCallId: string } | null
  hostId: string
  onClosed: () => void
  openChild: SessionRuntime['openChild']
}

/** Builds the live session object over a folded log. The host has acquired the lease already. */
export async function openSession(args: SessionArgs): Promise<Session> {
  const { store, harness, sessionId, state, clock } = args
  if (state.harness !== undefined && state.harness !== harness.name) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `Session ${JSON.stringify(sessionId)} belongs to harness ${JSON.stringify(state.harness)}; open it with that harness.`,
    )
  }
  const sessionSecrets = await SessionSecrets.open({
    harness,
    sessionId,
    hostId: args.hostId,
    given: args.secrets,
    usedBefore: state.secretNames,
    parent: args.parent ?? state.parent,
  })
  const scanner = sessionSecrets.scanner
  let lost: LogConflictError | undefined
  // Every append of the session passes the secret guard: a gap in a scan point fails instead of leaking.
  const writer = new SessionWriter(guardAppends(store, scanner), sessionId, state, (error) => {
    lost = error
  })
  const runtime: SessionRuntime = {
    logId: sessionId,
    harness,
    store,
    state,
    writer,
    scanner,
    sessionSecrets,
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

  let lease = args.lease
  let leaseLost: HarnessError | undefined
  let running: AbortController | undefined
  let runDone: Promise<void> | undefined
  let status: SessionStatus = state.openTurn ? (parkedCall(state) ? 'parked' : 'cut') : 'idle'
  const wakeups = store.wakeups

  /** While this host drives a turn, the session's wakeup sits at the lease's expiry: if the host dies, a worker takes over. */
  const keepWakeupAtExpiry = async () => {
    if (wakeups && lease && running) await wakeups.schedule(sessionId, lease.expiresAt)
  }
  const renewTimer =
    lease && store.leases
      ? setInterval(
          () => {
            if (!lease || !store.leases) return
            store.leases.renew(lease, args.leaseMs).then(
              async (renewed) => {
                lease = renewed
                await keepWakeupAtExpiry().catch(() => {})
              },
              (error: unknown) => {
                if (isHarnessError(error, 'LEASE_LOST')) {
                  leaseLost = error
                  running?.abort()
                }
              },
            )
          },
          Math.max(250, Math.floor(args.leaseMs / 3)),
        )
      : undefined
  renewTimer?.unref()

  let released = false
  const guard = () => {
    if (status === 'closed' || released)
      throw new HarnessError(
        'INVALID_ARGUMENT',
        status === 'parked'
          ? 'This session parked and let its lease go (it waits for a wake time or an answer); open it again with host.open({ sessionId }) to drive it.'
          : 'This session is closed; open it again with host.open({ sessionId }).',
      )
    if (lost) throw lost
    if (leaseLost) throw leaseLost
    if (running)
      throw new HarnessError('SESSION_BUSY', 'A turn of this session is still running; wait for its stream to end before sending again.')
  }

  /** Settles the calls a crash cut, by the replay rules; parked calls and calls that never started are not cut. */
  const settleCutCalls = async () => {
    const settle: ToolResultRecord[] = []
    for (const call of unsettledCalls(state)) {
      if (state.parked.has(call.id) || state.notStarted.has(call.id)) continue
      if (harness.replayOfCall(call) === 'safe') continue
      settle.push({
        type: 'harness.tool.result',
        toolCallId: call.id,
        toolName: call.name,
        ok: false,
        result: { error: scanner.redactText(harness.cutToolError) },
        cut: true,
      })
    }
    if (settle.length > 0) await writer.append(settle)
  }

  /** Whether a parked turn may go on now; if not, its wakeup is set for when it may. */
  const stillWaiting = async (): Promise<boolean> => {
    const parked = parkedCall(state)
    if (!parked) return false
    if (parked.reason === 'sleep' && parked.until !== null && parked.until > clock.now()) {
      await wakeups?.schedule(sessionId, parked.until)
      return true
    }
    if (parked.reason === 'ask') {
      const answered = [...state.questions.values()].some((q) => q.ask.toolCallId === parked.toolCallId && q.answer)
      if (!answered) {
        await cancelWakeupUnlessAnswered()
        return true
      }
    }
    return false
  }

  /**
   * Cancels the wakeup of a session that waits for an answer. An answer may land between
   * our read of the log and the cancel, and its wakeup would be lost with it: so after the
   * cancel, look at the tail again and make the session due at once if anything arrived.
   */
  const cancelWakeupUnlessAnswered = async () => {
    if (!wakeups) return
    await wakeups.cancel(sessionId)
    const arrived = await store.read(sessionId, { after: state.nextSeq - 1, limit: 1 })
    if (arrived.length > 0) await wakeups.schedule(sessionId, clock.now())
  }

  /** After a run: where the session's wakeup must be, and whether the host lets the session go. */
  const afterRun = async (outcome: RunOutcome | undefined) => {
    if (!outcome) return
    switch (outcome.kind) {
      case 'finished':
        status = 'idle'
        await wakeups?.cancel(sessionId)
        if (state.parent) await wakeups?.schedule(state.parent.sessionId, clock.now())
        break
      case 'parked':
        status = 'parked'
        if (outcome.parked.reason === 'sleep' && outcome.parked.until !== null) await wakeups?.schedule(sessionId, outcome.parked.until)
        else await cancelWakeupUnlessAnswered()
        // A parked session is free for whoever resumes it: a worker at the wake time, or the host that answers.
        await release()
        break
      case 'stopped':
      case 'failed':
        status = 'cut'
        break
    }
  }

  const run = (
    body: (control: {
      abortController: AbortController
      stopped: () => Error | undefined
      outcome?: RunOutcome
    }) => AsyncGenerator<StreamChunk>,
  ) =>
    ({
      async *[Symbol.asyncIterator]() {
        guard()
        const control = {
          abortController: new AbortController(),
          stopped: () => lost ?? leaseLost,
          outcome: undefined as RunOutcome | undefined,
        }
        running = control.abortController
        let finish: () => void = () => {}
        runDone = new Promise((resolve) => {
          finish = resolve
        })
        status = 'running'
        try {
          await keepWakeupAtExpiry()
          yield* body(control)
          await afterRun(control.outcome)
        } catch (error) {
          // No secret leaves the session in an error message either (a model's or a tool's error text).
          throw scrubError(scanner, error)
        } finally {
          running = undefined
          if (status === 'running') status = control.outcome?.kind === 'deleted' ? 'deleted' : 'cut'
          finish()
        }
      },
    }) satisfies AsyncIterable<StreamChunk>

  async function* recover(control: Parameters<typeof runTurn>[2]): AsyncGenerator<StreamChunk> {
    const open = state.openTurn
    if (!open) return
    if (await stillWaiting()) {
      control.outcome = { kind: 'parked', parked: parkedCall(state)! }
      return
    }
    await writer.append([
      { type: 'harness.turn.resumed', turnId: open.turnId, at: clock.now(), host: args.hostId, fence: lease?.fence ?? null },
    ])
    await settleCutCalls()
    yield* runTurn(runtime, open.turnId, control)
  }

  const release = async () => {
    released = true
    if (renewTimer) clearInterval(renewTimer)
    const held = lease
    lease = undefined
    if (held && store.leases) await store.leases.release(held).catch(() => {})
    if (status !== 'parked') status = 'closed'
    args.onClosed()
  }

  const session: Session = {
    id: sessionId,
    harness,
    get needsRecovery() {
      return state.openTurn !== undefined
    },
    get status() {
      return status
    },
    get parked() {
      return state.openTurn ? parkedCall(state) : undefined
    },
    send(input) {
      return run(async function* (control) {
        if (state.openTurn) {
          yield* recover(control)
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
          const secret = scanner.find(m)
          if (secret)
            throw new HarnessError(
              'RECORD_SECRET',
              `Prompt message ${i} holds a secret of the session at ${secret.path}; send it without the secret.`,
            )
        }
        await writer.append([
          { type: 'harness.turn.started', turnId, messages, at: clock.now(), host: args.hostId, fence: lease?.fence ?? null },
        ])
        yield* runTurn(runtime, turnId, control)
      })
    },
    resume() {
      return run(recover)
    },
    async cancel(reason = 'cancelled by the user') {
      if (running) {
        running.abort()
        await runDone
      }
      const open = state.openTurn
      if (!open) return
      const kept = scanner.redactText(typeof reason === 'string' ? reason : String(reason))
      await writer.append([{ type: 'harness.turn.cancelled', turnId: open.turnId, at: clock.now(), reason: kept }])
      await wakeups?.cancel(sessionId)
      status = 'idle'
    },
    async handOff() {
      if (running) {
        running.abort()
        // The tool in flight finishes its current step; its next write is refused, so the turn stays open.
        writer.close('was handed off for a deploy')
        await runDone
      }
      if (state.openTurn && wakeups) await wakeups.schedule(sessionId, clock.now())
      await release()
    },
    entries: () => readAll(store, sessionId),
    async close() {
      if (status === 'closed') return
      if (running) {
        running.abort()
        writer.close('was closed')
        await runDone
      }
      if (!state.openTurn) await wakeups?.cancel(sessionId)
      await release()
      status = 'closed'
    },
  }
  return session
}

function toMessages(input: TurnInput): LoggedMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  const list = Array.isArray(input) ? input : [input]
  return list.map((m) => ({ ...m }))
}
