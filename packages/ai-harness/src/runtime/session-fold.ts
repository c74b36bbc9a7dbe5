import type { LogEntry, LogRecord } from '../contract/types.js'
import type { JsonValue } from '../json/json-types.js'
import type { AssistantRecord, LoggedMessage, LoggedToolCall, ToolResultRecord } from './records.js'

/** A stored step: `value` is undefined for a step whose function returned nothing. */
export interface StoredStep {
  readonly value: JsonValue | undefined
}

/** The message shape `chat()` takes, rebuilt from the log. */
export interface FoldedMessage {
  role: 'user' | 'assistant' | 'tool'
  content: unknown
  toolCalls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>
  toolCallId?: string
}

/** Everything the harness needs to know about a session, rebuilt from its log alone. */
export interface SessionState {
  harness: string | undefined
  /** The seq the next append must expect. */
  nextSeq: number
  messages: FoldedMessage[]
  /** Stored steps by tool call id, then by step name. */
  steps: Map<string, Map<string, StoredStep>>
  /** Logged results by tool call id. */
  results: Map<string, ToolResultRecord>
  /** Every tool call the model made, by id. */
  toolCalls: Map<string, LoggedToolCall & { turnId: string }>
  /** The turn that started and neither finished nor was cancelled: a cut turn, or one in flight. */
  openTurn: { turnId: string; lastAssistant: AssistantRecord | undefined } | undefined
  turns: number
}

export function emptyState(): SessionState {
  return {
    harness: undefined,
    nextSeq: 1,
    messages: [],
    steps: new Map(),
    results: new Map(),
    toolCalls: new Map(),
    openTurn: undefined,
    turns: 0,
  }
}

/** The text the model reads for a logged tool result (as `chat()` builds it). */
export function toolMessageContent(result: JsonValue): string {
  return typeof result === 'string' ? result : JSON.stringify(result)
}

/** Applies one log entry to the state. Unknown (app) record types change nothing here. */
export function applyEntry(state: SessionState, entry: LogEntry): void {
  state.nextSeq = entry.seq + 1
  const record = entry.record as LogRecord & Record<string, unknown>
  switch (record.type) {
    case 'harness.session.opened':
      state.harness = String(record.harness)
      break
    case 'harness.turn.started':
      state.turns++
      state.openTurn = { turnId: String(record.turnId), lastAssistant: undefined }
      for (const m of record.messages as LoggedMessage[]) state.messages.push({ ...m })
      break
    case 'harness.assistant': {
      const assistant = record as unknown as AssistantRecord
      if (state.openTurn) state.openTurn.lastAssistant = assistant
      const message: FoldedMessage = { role: 'assistant', content: assistant.text === '' ? null : assistant.text }
      if (assistant.toolCalls.length > 0) {
        message.toolCalls = assistant.toolCalls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: c.arguments },
        }))
        for (const call of assistant.toolCalls) state.toolCalls.set(call.id, { ...call, turnId: assistant.turnId })
      }
      state.messages.push(message)
      break
    }
    case 'harness.step': {
      const toolCallId = String(record.toolCallId)
      const steps = state.steps.get(toolCallId) ?? new Map<string, StoredStep>()
      steps.set(String(record.name), { value: record.value as JsonValue | undefined })
      state.steps.set(toolCallId, steps)
      break
    }
    case 'harness.tool.result': {
      const result = record as unknown as ToolResultRecord
      state.results.set(result.toolCallId, result)
      state.messages.push({ role: 'tool', toolCallId: result.toolCallId, content: toolMessageContent(result.result) })
      break
    }
    case 'harness.turn.finished':
    case 'harness.turn.cancelled':
      state.openTurn = undefined
      break
  }
}

export function foldLog(entries: readonly LogEntry[], state = emptyState()): SessionState {
  for (const entry of entries) applyEntry(state, entry)
  return state
}

/** Tool calls of the open turn's last batch that have no logged result yet. */
export function unsettledCalls(state: SessionState): LoggedToolCall[] {
  const last = state.openTurn?.lastAssistant
  if (!last) return []
  return last.toolCalls.filter((call) => !state.results.has(call.id))
}
