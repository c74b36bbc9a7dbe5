import { type AnyTool, type ChatMiddleware, chat, EventType, type StreamChunk } from '@tanstack/ai'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import type { LogRecord } from '../contract/types.js'
import { jsonCopy, jsonEqual } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { CallIds } from './call-ids.js'
import { HARNESS_EVENTS } from './event-names.js'
import { own } from './own-failures.js'
import { isParkSignal, ParkSignal } from './park.js'
import type { ApprovalRequestedRecord, AssistantRecord, LoggedToolCall, ParkedRecord, ToolResultRecord } from './records.js'
import { approvalId, callInput, openApprovalsOf } from './session-fold.js'
import type { ReplayPolicy } from './durable-tool.js'
import type { SessionRuntime } from './session-runtime.js'
import { redactModelInput } from '../secrets/model-input.js'
import { StreamRedactor } from '../secrets/stream-redactor.js'
import { type ChatLoopControl, wrapTool } from './tool-call.js'
import { ATTR, inSpan, type OtelContext, turnSpan } from './tracing.js'
import type { TurnRunControl } from './turn-run.js'

/**
 * The chat loop of a turn, in one run of the turn: one `chat()` call that logs each
 * assistant message with tool calls before the tools run, settles every tool call in the
 * log, logs the final answer and the end of the turn, and streams the chunks with the
 * session's secrets removed. A tool that parks (long sleep, question) ends the run
 * without ending the turn.
 */
export async function* chatTurn(session: SessionRuntime, turnId: string, control: TurnRunControl): AsyncGenerator<StreamChunk> {
  // One span per run of the turn; spans started while it runs (tools, steps, the store, chat()'s own) nest under it.
  const span = await turnSpan(session, turnId)
  // A run that a stop gave up on never reaches the finally below: its span ends then.
  const unwatch = control.onAbandoned?.(() => {
    span.set({ [ATTR.outcome]: 'abandoned' })
    span.end()
  })
  let threw = false
  try {
    yield* inSpan(span, chatLoopAndEnd(session, turnId, control, span.context))
  } catch (error) {
    threw = true
    span.fail(error)
    throw error
  } finally {
    unwatch?.()
    // A throw that no stop explains (the model call failed, say) is a failed run, not a stopped one.
    const stopped = control.stopped() !== undefined || control.abortController.signal.aborted
    span.set({ [ATTR.outcome]: control.outcome?.kind ?? (threw && !stopped ? 'failed' : 'stopped') })
    span.end()
  }
}

/**
 * The mutable state of one chat() loop of a turn, shared by the recorder middleware's
 * hooks and the stream loop: why the loop stopped (the first reason wins), the text
 * streamed since the last logged assistant message, and the tools bound to the session
 * so far. Tool calls reach it as their {@link ChatLoopControl}.
 */
class ChatLoopState implements ChatLoopControl {
  /** The first reason the loop was stopped for: the session's own failure, or a park signal. */
  fatal: unknown
  /** The answer text streamed since the last assistant record with tool calls. */
  text = ''
  /** The call ids the model's adapter gives, made unique in the session. */
  readonly ids: CallIds
  /** Each message the model was given, redacted: a message is redacted once per chat loop. */
  readonly modelInputCache = new Map<string, unknown>()
  // Every tool the chat loop has, also one a middleware adds or swaps in (onConfig), is bound to
  // the session: durability never depends on where a tool came from.
  readonly #bound = new Map<AnyTool, AnyTool>()
  readonly #boundTools = new Set<AnyTool>()
  // Tools whose calls wait for approval in the log (the wrapper takes `needsApproval` off what chat() sees).
  readonly #approvalOf = new Map<AnyTool, boolean>()
  #replayByName = new Map<string, ReplayPolicy>()
  #needsApproval = new Set<string>()

  constructor(
    readonly session: SessionRuntime,
    readonly turnId: string,
    readonly abortController: AbortController,
    readonly trace: OtelContext | undefined,
  ) {
    this.ids = new CallIds((id) => session.state.toolCalls.has(id))
  }

  stop(reason: object): void {
    this.fatal ??= reason
    this.abortController.abort()
  }

  get stopped(): boolean {
    return this.fatal !== undefined || this.abortController.signal.aborted
  }

  get parked(): boolean {
    return isParkSignal(this.fatal)
  }

  /** Appends through the session's writer; a failed append stops the loop too. */
  async append(records: LogRecord[]): Promise<void> {
    try {
      await this.session.writer.append(records)
    } catch (error) {
      this.stop(error as object)
      throw error
    }
  }

  /** Whether a call of this tool waits for approval in the log. */
  needsApproval(toolName: string): boolean {
    return this.#needsApproval.has(toolName)
  }

  /** The tools as chat() gets them, each bound to the session (once, however often it is passed). */
  bind(tools: readonly AnyTool[]): AnyTool[] {
    this.#replayByName = new Map()
    this.#needsApproval = new Set()
    return tools.map((tool) => {
      let wrapped = this.#boundTools.has(tool) ? tool : this.#bound.get(tool)
      if (!wrapped) {
        wrapped = wrapTool(this.session, tool, this)
        this.#bound.set(tool, wrapped)
        this.#boundTools.add(wrapped)
        this.#approvalOf.set(wrapped, wrapped !== tool && tool.needsApproval === true)
      }
      this.#replayByName.set(tool.name, this.session.harness.replayOfTool(tool))
      if (this.#approvalOf.get(wrapped)) this.#needsApproval.add(tool.name)
      return wrapped
    })
  }

  /** The log's record of an assistant message with tool calls. */
  assistantRecord(
    toolCalls: ReadonlyArray<{ id: string; function: { name: string; arguments: string } }>,
    content: unknown,
  ): AssistantRecord {
    const { scanner } = this.session
    return {
      type: 'harness.assistant',
      turnId: this.turnId,
      text: scanner.redactText(typeof content === 'string' ? content : ''),
      // The log keeps no secret, not even one the model put in its arguments; this chat loop still gets the real ones.
      // Ids stay as they are (the secret guard refuses one made of a secret); a made-up tool name is replaced whole.
      toolCalls: toolCalls.map((c) => {
        const call: LoggedToolCall = {
          id: c.id,
          name: scanner.redactWhole(c.function.name),
          arguments: scanner.redactText(c.function.arguments),
        }
        const replay = this.#replayByName.get(c.function.name)
        if (replay) call.replay = replay
        const modelId = this.ids.modelIdOf(c.id)
        if (modelId !== undefined) call.modelId = modelId
        return call
      }),
    }
  }
}

/** The chat loop, then the end of the turn's run: parked, stopped, failed or finished. */
async function* chatLoopAndEnd(
  session: SessionRuntime,
  turnId: string,
  control: TurnRunControl,
  trace: OtelContext | undefined,
): AsyncGenerator<StreamChunk> {
  const loop = new ChatLoopState(session, turnId, control.abortController, trace)
  const redactor = new StreamRedactor(session.scanner)
  const { failed, chatRunId } = yield* streamChat(loop, redactor)
  yield* redactor.flush()
  try {
    yield* endTurnRun(session, turnId, control, loop.fatal, failed, loop.text, redactor, chatRunId)
  } catch (error) {
    // A log deleted under this host: say so, rather than call it a conflict or a cut turn.
    if (await logWasDeleted(session).catch(() => false)) {
      control.outcome = { kind: 'deleted' }
      throw new HarnessError(
        'LOG_CONFLICT',
        `Session ${JSON.stringify(session.sessionId)} was deleted while this host drove it; this host wrote nothing more to it.`,
        { cause: error },
      )
    }
    throw error
  }
}

/**
 * Streams the chat loop, its chunks redacted: whether chat() reported a failure, and
 * the id TanStack AI gave its own run (`RUN_STARTED`). After a stop it ends quietly.
 */
async function* streamChat(
  loop: ChatLoopState,
  redactor: StreamRedactor,
): AsyncGenerator<StreamChunk, { failed: boolean; chatRunId: string | undefined }> {
  const { harness, state } = loop.session
  const stream = chat({
    adapter: loop.ids.wrap(harness.options.adapter),
    messages: state.messages.map((m) => ({ ...m })) as never,
    tools: loop.bind(harness.tools) as never,
    systemPrompts: harness.options.systemPrompts,
    middleware: [...(harness.options.middleware ?? []), recorder(loop)] as never,
    abortController: loop.abortController,
    modelOptions: harness.options.modelOptions as never,
    agentLoopStrategy: harness.options.agentLoopStrategy as never,
    threadId: loop.session.sessionId,
    // The harness reports failures itself, as typed errors; chat()'s console logging would repeat them.
    debug: harness.options.debug ?? false,
  }) as AsyncIterable<StreamChunk>
  let failed = false
  let chatRunId: string | undefined
  try {
    for await (const chunk of stream) {
      if (chunk.type === EventType.RUN_STARTED) chatRunId ??= (chunk as { runId?: string }).runId
      // After a stop only custom events still pass: a tool's last events (a child's question) belong to the story.
      if (loop.fatal && chunk.type !== EventType.CUSTOM) continue
      if (chunk.type === EventType.TEXT_MESSAGE_CONTENT) loop.text += (chunk as { delta?: string }).delta ?? ''
      if (chunk.type === EventType.RUN_ERROR) failed = true
      yield* redactor.push(chunk)
    }
  } catch (error) {
    if (!loop.fatal && !loop.abortController.signal.aborted) throw error
  }
  return { failed, chatRunId }
}

/**
 * The last middleware: it sees the tool list every other middleware left (and binds every
 * tool to the session), and what the model gets: every message and system prompt, secrets
 * cut out. It logs each batch of tool calls before its tools run, and the calls chat()
 * settled itself.
 */
function recorder(loop: ChatLoopState): ChatMiddleware {
  return {
    name: 'ai-harness-recorder',
    onConfig(_ctx, config) {
      const redacted = redactModelInput(loop.session.scanner, config, loop.modelInputCache)
      return { ...(redacted ?? {}), tools: loop.bind(config.tools) } as never
    },
    async onInterruptBoundary(ctx) {
      if (ctx.phase !== 'beforeTools') return undefined
      const last = [...ctx.messages].reverse().find((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0)
      if (last?.toolCalls) await logBatch(loop, last.toolCalls, last.content)
      return undefined
    },
    // Calls that chat() settled without running the tool (arguments that fail the input
    // schema, a tool the harness does not have) are logged here, as the model saw them.
    onToolPhaseComplete: (_ctx, info) => logSettledByChat(loop, info.results),
  }
}

/**
 * Logs a batch of tool calls before any of its tools runs: the assistant message (once)
 * with the approval requests of its calls; stops the loop while an approval is undecided.
 */
async function logBatch(
  loop: ChatLoopState,
  toolCalls: ReadonlyArray<{ id: string; function: { name: string; arguments: string } }>,
  content: unknown,
): Promise<void> {
  const { session } = loop
  const { state } = session
  const records: Array<AssistantRecord | ApprovalRequestedRecord> = []
  const newBatch = !toolCalls.every((c) => state.toolCalls.has(c.id))
  if (newBatch) records.push(loop.assistantRecord(toolCalls, content))
  // Every call of the batch that needs approval asks for it before any tool of the batch runs, as
  // chat() does; the requests land with the assistant record, so a crash never leaves a call unasked.
  const waiting = toolCalls.filter((c) => loop.needsApproval(c.function.name) && !state.results.has(c.id))
  for (const c of waiting) {
    if (state.approvals.has(c.id)) continue
    records.push({ type: 'harness.approval.requested', toolCallId: c.id, toolName: c.function.name, at: session.clock.now() })
  }
  if (records.length > 0) {
    await loop.append(records)
    if (newBatch) loop.text = ''
  }
  const undecided = waiting.find((c) => !state.approvals.get(c.id)?.decision)
  // The chat loop stops before any tool of the batch runs; the turn parks until every approval is decided.
  if (undecided) loop.stop(own(session, new ParkSignal(undecided.id, 'approval', null, { toolCallId: undecided.id })))
}

/** Logs the results chat() gave calls it settled without the tool, as the model saw them. */
async function logSettledByChat(
  loop: ChatLoopState,
  results: ReadonlyArray<{ toolCallId: string; toolName: string; result?: unknown }>,
): Promise<void> {
  // A stopped chat loop (a park, a conflict, a hand-off) settles nothing more: its calls stay open.
  if (loop.fatal || loop.abortController.signal.aborted) return
  const { state, scanner } = loop.session
  const missing = results.filter((r) => !state.results.has(r.toolCallId) && state.toolCalls.has(r.toolCallId))
  if (missing.length === 0) return
  const records: ToolResultRecord[] = missing.map((r) => {
    const result = scanner.redact(jsonCopy(r.result ?? null)) as JsonValue
    const isError = typeof result === 'object' && result !== null && !Array.isArray(result) && 'error' in result
    const toolName = scanner.redactWhole(r.toolName)
    return { type: 'harness.tool.result', toolCallId: r.toolCallId, toolName, ok: !isError, result, cut: false }
  })
  await loop.append(records)
}

/** After the chat loop, the end of the turn's run: park, stop, or log the end of the turn. */
async function* endTurnRun(
  session: SessionRuntime,
  turnId: string,
  control: TurnRunControl,
  fatal: unknown,
  failed: boolean,
  text: string,
  redactor: StreamRedactor,
  chatRunId: string | undefined,
): AsyncGenerator<StreamChunk> {
  const { scanner, writer } = session
  if (isParkSignal(fatal)) {
    let parked: ParkedRecord
    try {
      parked = await park(session, fatal)
    } catch (error) {
      // An answer landed between the question and the park: its wakeup makes the turn
      // due, and whoever takes it next sees the answer. This host stops here.
      if (!isHarnessError(error, 'LOG_CONFLICT') || (await logWasDeleted(session).catch(() => false))) throw error
      control.outcome = { kind: 'stopped' }
      return
    }
    control.outcome = { kind: 'parked', parked }
    if (parked.reason === 'ask') yield redactor.redactEvent(customEvent(HARNESS_EVENTS.question, fatal.event))
    const approvals = parked.reason === 'approval' ? approvalsOf(session) : []
    // A child agent's approvals keep the child's session and call ids: approve them in the child.
    const childApprovals = parked.reason === 'agent' ? ((fatal.event.approvals as unknown[] | undefined) ?? []) : []
    for (const approval of [...approvals, ...childApprovals]) yield redactor.redactEvent(customEvent(HARNESS_EVENTS.approval, approval))
    yield redactor.redactEvent(
      customEvent(HARNESS_EVENTS.parked, { reason: parked.reason, until: parked.until, toolCallId: parked.toolCallId }),
    )
    // TanStack AI's own end of its run when it waits for approval, so its client shows the approval prompt.
    if (approvals.length > 0) yield redactor.redactEvent(approvalInterrupt(session, chatRunId, approvals))
    return
  }
  const stop = fatal ?? control.stopped()
  if (stop) throw stop
  if (control.abortController.signal.aborted) {
    control.outcome = { kind: 'stopped' }
    return
  }
  if (failed) {
    control.outcome = { kind: 'failed' }
    return
  }
  const end: LogRecord[] = []
  if (text !== '') end.push({ type: 'harness.assistant', turnId, text: scanner.redactText(text), toolCalls: [] })
  end.push({ type: 'harness.turn.finished', turnId, at: session.clock.now() })
  await writer.append(end)
  control.outcome = { kind: 'finished' }
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
async function park(session: SessionRuntime, signal: ParkSignal): Promise<ParkedRecord> {
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
