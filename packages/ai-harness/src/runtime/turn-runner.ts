import { EventType, type StreamChunk } from '@tanstack/ai'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import type { LogRecord } from '../contract/types.js'
import { jsonEqual } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { StreamRedactor } from '../secrets/stream-redactor.js'
import { ChatLoopState, streamChat } from './chat-loop.js'
import { HARNESS_EVENTS } from './event-names.js'
import type { ParkedRecord } from './records.js'
import type { Park, StopReason } from './run-stop.js'
import { approvalId, callInput, openApprovalsOf } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import { ATTR, inSpan, type OtelContext, turnSpan } from './tracing.js'
import type { TurnRunControl, TurnRunEnd, TurnRunStream } from './turn-run.js'

/**
 * The chat loop of a turn, in one run of the turn: one `chat()` call that logs each
 * assistant message with tool calls before the tools run, settles every tool call in the
 * log, logs the final answer and the end of the turn, and streams the chunks with the
 * session's secrets removed. A tool that parks (long sleep, question) ends the run
 * without ending the turn.
 */
export async function* chatTurn(session: SessionRuntime, turnId: string, control: TurnRunControl): TurnRunStream {
  // One span per run of the turn; spans started while it runs (tools, steps, the store, chat()'s own) nest under it.
  const span = await turnSpan(session, turnId)
  // A run that a stop gave up on never reaches the finally below: its span ends then.
  const unwatch = control.onAbandoned?.(() => {
    span.set({ [ATTR.outcome]: 'abandoned' })
    span.end()
  })
  let threw = false
  let end: TurnRunEnd | undefined
  try {
    end = yield* inSpan(span, chatLoopAndEnd(session, turnId, control, span.context))
    if (end.error !== undefined) span.fail(end.error)
    return end
  } catch (error) {
    threw = true
    span.fail(error)
    throw error
  } finally {
    unwatch?.()
    // A throw that no stop explains (the model call failed, say) is a failed run, not a stopped one.
    const stopped = control.stopped() !== undefined || control.runStop.stopped
    span.set({ [ATTR.outcome]: end?.outcome.kind ?? (threw && !stopped ? 'failed' : 'stopped') })
    span.end()
  }
}

/** The chat loop, then the end of the turn's run: parked, stopped, failed, finished or deleted. */
async function* chatLoopAndEnd(
  session: SessionRuntime,
  turnId: string,
  control: TurnRunControl,
  trace: OtelContext | undefined,
): AsyncGenerator<StreamChunk, TurnRunEnd> {
  const loop = new ChatLoopState(session, turnId, control.runStop, trace)
  const redactor = new StreamRedactor(session.scanner)
  const { failed, chatRunId } = yield* streamChat(loop, redactor)
  yield* redactor.flush()
  // The run returns how it ended; its driver streams the tail (see `TurnRunEnd`).
  return endOrDeleted(session, () => endTurnRun(session, turnId, control, loop.fatal, failed, loop.text, redactor, chatRunId))
}

/** The end of the run, or `deleted` when it failed because the session's log was deleted under this host. */
async function endOrDeleted(session: SessionRuntime, end: () => Promise<TurnRunEnd>): Promise<TurnRunEnd> {
  try {
    return await end()
  } catch (error) {
    // A log deleted under this host: say so, rather than call it a conflict or a cut turn.
    if (!(await logWasDeleted(session).catch(() => false))) throw error
    const deleted = new HarnessError(
      'LOG_CONFLICT',
      `Session ${JSON.stringify(session.sessionId)} was deleted while this host drove it; this host wrote nothing more to it.`,
      { cause: error },
    )
    return { outcome: { kind: 'deleted' }, tail: [], error: deleted }
  }
}

/** After the chat loop, the end of the turn's run: park, stop, or log the end of the turn. */
async function endTurnRun(
  session: SessionRuntime,
  turnId: string,
  control: TurnRunControl,
  fatal: StopReason | undefined,
  failed: boolean,
  text: string,
  redactor: StreamRedactor,
  chatRunId: string | undefined,
): Promise<TurnRunEnd> {
  const { scanner, writer } = session
  if (fatal?.kind === 'park') return parkTurnRun(session, fatal.park, redactor, chatRunId)
  const stop = fatal ? fatal.error : control.stopped()
  if (stop) throw stop
  if (control.runStop.signal.aborted) return { outcome: { kind: 'stopped' }, tail: [] }
  if (failed) return { outcome: { kind: 'failed' }, tail: [] }
  const end: LogRecord[] = []
  if (text !== '') end.push({ type: 'harness.assistant', turnId, text: scanner.redactText(text), toolCalls: [] })
  end.push({ type: 'harness.turn.finished', turnId, at: session.clock.now() })
  await writer.append(end)
  return { outcome: { kind: 'finished' }, tail: [] }
}

/** A run that parks: logs why the turn waits, with the chunks that show the client what it waits for (a question, approvals). */
async function parkTurnRun(
  session: SessionRuntime,
  signal: Park,
  redactor: StreamRedactor,
  chatRunId: string | undefined,
): Promise<TurnRunEnd> {
  let parked: ParkedRecord
  try {
    parked = await park(session, signal)
  } catch (error) {
    // An answer landed between the question and the park: its wakeup makes the turn
    // due, and whoever takes it next sees the answer. This host stops here.
    if (!isHarnessError(error, 'LOG_CONFLICT') || (await logWasDeleted(session).catch(() => false))) throw error
    return { outcome: { kind: 'stopped' }, tail: [] }
  }
  const tail: StreamChunk[] = []
  if (parked.reason === 'ask') tail.push(redactor.redactEvent(customEvent(HARNESS_EVENTS.question, signal.event)))
  const approvals = parked.reason === 'approval' ? approvalsOf(session) : []
  // A child agent's approvals keep the child's session and call ids: approve them in the child.
  const childApprovals = parked.reason === 'agent' ? ((signal.event.approvals as unknown[] | undefined) ?? []) : []
  for (const approval of [...approvals, ...childApprovals]) tail.push(redactor.redactEvent(customEvent(HARNESS_EVENTS.approval, approval)))
  tail.push(
    redactor.redactEvent(customEvent(HARNESS_EVENTS.parked, { reason: parked.reason, until: parked.until, toolCallId: parked.toolCallId })),
  )
  // TanStack AI's own end of its run when it waits for approval, so its client shows the approval prompt.
  if (approvals.length > 0) tail.push(redactor.redactEvent(approvalInterrupt(session, chatRunId, approvals)))
  return { outcome: { kind: 'parked', parked }, tail }
}

/**
 * True when the session's log is no longer the one this host folded: its first record is
 * gone or differs (deleted, maybe started anew under the same id).
 */
async function logWasDeleted(session: SessionRuntime): Promise<boolean> {
  const opened = session.state.opened
  if (!opened) return false
  const [first] = await session.store.read(session.sessionId, { after: 0, limit: 1 })
  return !first || !jsonEqual(first.record, opened)
}

/** Logs that the turn waits on purpose, with the calls of the batch that had not started. */
async function park(session: SessionRuntime, signal: Park): Promise<ParkedRecord> {
  const batch = session.state.openTurn?.lastAssistant?.toolCalls ?? []
  const index = batch.findIndex((c) => c.id === signal.toolCallId)
  // A wait for approval stops the batch before any of its calls runs (the calls before one
  // that asked on its own have their results): every other open call of it has not started.
  const notStarted = (signal.reason === 'approval' ? batch.filter((c) => c.id !== signal.toolCallId) : batch.slice(index + 1))
    .map((c) => c.id)
    .filter((id) => !session.state.results.has(id))
  const record: ParkedRecord = {
    type: 'harness.parked',
    toolCallId: signal.toolCallId,
    reason: signal.reason,
    until: signal.until,
    notStarted,
  }
  await session.writer.append([record])
  return record
}

/** The value of a `harness.approval` event: one call that waits for approval. */
interface ApprovalEvent {
  sessionId: string
  toolCallId: string
  approvalId: string
  toolName: string
  input: JsonValue
}

/** The calls of the open turn that wait for approval, as the stream shows them. */
function approvalsOf(session: SessionRuntime): ApprovalEvent[] {
  return openApprovalsOf(session.state).map((request) => ({
    sessionId: session.sessionId,
    toolCallId: request.toolCallId,
    approvalId: approvalId(request.toolCallId),
    toolName: request.toolName,
    input: callInput(session.state.toolCalls.get(request.toolCallId)?.arguments ?? ''),
  }))
}

/**
 * The `RUN_FINISHED` chunk with which chat() ends a run that waits for approval: an
 * interrupt per call, with TanStack AI's ids (`approval_${toolCallId}`), reason, message and
 * metadata (`kind: 'approval'`, `toolName`, `input`). A client answers it through the app,
 * which calls `host.approve`.
 */
function approvalInterrupt(session: SessionRuntime, chatRunId: string | undefined, approvals: readonly ApprovalEvent[]): StreamChunk {
  return {
    type: EventType.RUN_FINISHED,
    runId: chatRunId ?? session.state.openTurn?.turnId ?? session.sessionId,
    threadId: session.sessionId,
    timestamp: Date.now(),
    outcome: {
      type: 'interrupt',
      interrupts: approvals.map((a) => ({
        id: a.approvalId,
        reason: 'tool_call',
        message: `Approval required to run ${a.toolName}`,
        toolCallId: a.toolCallId,
        metadata: { kind: 'approval', toolName: a.toolName, input: a.input },
      })),
    },
  } as unknown as StreamChunk
}

function customEvent(name: string, value: unknown): StreamChunk {
  return { type: EventType.CUSTOM, name, value, timestamp: Date.now() } as StreamChunk
}
