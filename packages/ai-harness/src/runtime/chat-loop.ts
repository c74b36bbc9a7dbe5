import { type AnyTool, type ChatMiddleware, chat, EventType, type StreamChunk } from '@tanstack/ai'
import type { LogRecord } from '../contract/types.js'
import { jsonCopy } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { redactModelInput } from '../secrets/model-input.js'
import type { StreamRedactor } from '../secrets/stream-redactor.js'
import { CallIds } from './call-ids.js'
import type { ReplayPolicy } from './durable-tool.js'
import type { ApprovalRequestedRecord, AssistantRecord, LoggedToolCall, ToolResultRecord } from './records.js'
import type { SessionRuntime } from './session-runtime.js'
import { wrapTool } from './tool-binding.js'
import type { ChatLoopControl } from './tool-call.js'
import type { RunStop, StopReason } from './run-stop.js'
import type { OtelContext } from './tracing.js'

/**
 * The chat loop of a run of a turn: one `chat()` call with the session's tools bound to
 * it and the recorder middleware that logs each batch of tool calls before its tools run.
 */

/**
 * The mutable state of one chat() loop of a turn, shared by the recorder middleware's
 * hooks and the stream loop: why the loop stopped (the first reason wins), the text
 * streamed since the last logged assistant message, and the tools bound to the session
 * so far. Tool calls reach it as their {@link ChatLoopControl}.
 */
export class ChatLoopState implements ChatLoopControl {
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
    /** The run's stop authority: the loop's signal, and why it stopped. */
    readonly runStop: RunStop,
    readonly trace: OtelContext | undefined,
  ) {
    this.ids = new CallIds((id) => session.state.toolCalls.has(id))
  }

  /** The first reason the loop was stopped for: the session's own failure, or a park. */
  get fatal(): StopReason | undefined {
    return this.runStop.reason
  }

  stop(error: unknown): void {
    this.runStop.stop(error)
  }

  stopFor(reason: StopReason): void {
    this.runStop.stopFor(reason)
  }

  get stopped(): boolean {
    return this.runStop.stopped
  }

  get parked(): boolean {
    return this.runStop.parked
  }

  /** Appends through the session's writer; a failed append stops the loop too. */
  async append(records: LogRecord[]): Promise<void> {
    try {
      await this.session.writer.append(records)
    } catch (error) {
      this.stop(error)
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

/**
 * Streams the chat loop, its chunks redacted: whether chat() reported a failure, and
 * the id TanStack AI gave its own run (`RUN_STARTED`). After a stop it ends quietly.
 */
export async function* streamChat(
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
    abortController: loop.runStop.controller,
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
    if (!loop.stopped) throw error
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
  if (undecided) loop.runStop.park({ toolCallId: undecided.id, reason: 'approval', until: null, event: { toolCallId: undecided.id } })
}

/** Logs the results chat() gave calls it settled without the tool, as the model saw them. */
async function logSettledByChat(
  loop: ChatLoopState,
  results: ReadonlyArray<{ toolCallId: string; toolName: string; result?: unknown }>,
): Promise<void> {
  // A stopped chat loop (a park, a conflict, a hand-off) settles nothing more: its calls stay open.
  if (loop.stopped) return
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
