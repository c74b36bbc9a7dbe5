import { HarnessError } from '../contract/errors.js'
import type { LoggedMessage, ParkedRecord } from './records.js'
import type { TurnInput } from './session.js'
import { parkedCall, type TurnInputRef } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import { beginTurnTrace, dropTurnTrace } from './tracing.js'
import type { TurnRun, TurnRunStream } from './turn-run.js'
import { chatTurn } from './turn-runner.js'

/** What a sent turn needs from its session object besides the runtime. */
export interface SendTurnArgs {
  readonly input: TurnInput
  /** The inbox prompt the turn runs (`host.submit`), if it runs one. */
  readonly ref?: TurnInputRef
  readonly hostId: string
  readonly fence: number | null
  /** Finishes the session's open turn by the replay rules first. */
  readonly recover: () => TurnRunStream
}

/**
 * A run that sends a prompt: an open turn is recovered first (a prompt sent to a turn that
 * still waits is refused), then the new turn is logged and its chat loop runs.
 */
export async function* sendTurn(runtime: SessionRuntime, turnRun: TurnRun, args: SendTurnArgs): TurnRunStream {
  const { state, clock, scanner } = runtime
  if (state.openTurn) {
    const recovered = yield* args.recover()
    const waiting = parkedCall(state)
    if (state.openTurn && waiting) throw waitingTurn(waiting)
    if (state.openTurn) return recovered
  }
  const turnId = crypto.randomUUID()
  const messages = toMessages(args.input)
  for (const [i, m] of messages.entries()) {
    const secret = scanner.find(m)
    if (secret)
      throw new HarnessError(
        'RECORD_SECRET',
        `Prompt message ${i} holds a secret of the session at ${secret.path}; send it without the secret.`,
      )
  }
  const trace = await beginTurnTrace(runtime, turnId, args.hostId)
  try {
    const started = { type: 'harness.turn.started', turnId, messages, at: clock.now(), host: args.hostId, fence: args.fence }
    await runtime.writer.append([{ ...started, ...(args.ref ? { input: { ...args.ref } } : {}), ...trace }])
  } catch (error) {
    // No run takes the turn's span: it ends here, failed, rather than never.
    dropTurnTrace(runtime, turnId, error)
    throw error
  }
  return yield* chatTurn(runtime, turnId, turnRun)
}

/** A prompt as the log keeps it: TanStack AI model messages. */
export function toMessages(input: TurnInput): LoggedMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }]
  const list = Array.isArray(input) ? input : [input]
  return list.map((m) => ({ ...m }))
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
