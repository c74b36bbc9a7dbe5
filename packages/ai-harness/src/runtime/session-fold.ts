import { forEachPage } from '../contract/read-all.js'
import type { HarnessStore, LogEntry, LogRecord } from '../contract/types.js'
import type { JsonValue } from '../json/json-types.js'
import type {
  AnswerRecord,
  AnswerRejectedRecord,
  ApprovalDecidedRecord,
  ApprovalRequestedRecord,
  AskRecord,
  AssistantRecord,
  LoggedMessage,
  LoggedToolCall,
  ParkedRecord,
  SessionOpenedRecord,
  StepFailedRecord,
  ToolResultRecord,
} from './records.js'
import { applyOutcomeRecord, emptyOutcomeState, forgetCallOutcomes, type OutcomeState } from './outcome-records.js'

/** A stored step: `value` is undefined for a step whose function returned nothing. */
export interface StoredStep {
  readonly value: JsonValue | undefined
}

/** The failed attempts of a step that has no value yet: how many, and the last one. */
export interface StepFailures {
  /** The highest attempt number logged as failed. */
  readonly attempts: number
  readonly last: StepFailedRecord
}

/** A turn's trace context, as `harness.turn.started` logged it (see `TurnStartedRecord`). */
export interface LoggedTrace {
  readonly traceId: string
  readonly spanId: string
  readonly flags: number
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
  /** The session's first record: a log whose first record differs was deleted and started anew. */
  opened: SessionOpenedRecord | undefined
  /** The seq the next append must expect. */
  nextSeq: number
  messages: FoldedMessage[]
  /** Stored steps by tool call id, then by step name. */
  steps: Map<string, Map<string, StoredStep>>
  /** Failed attempts of steps without a value, by tool call id, then by step name. */
  stepFailures: Map<string, Map<string, StepFailures>>
  /** The highest attempt begun (`harness.step.started`) of steps with retries and no value, by tool call id, then step name. */
  stepStarts: Map<string, Map<string, number>>
  /** Logged results by tool call id. */
  results: Map<string, ToolResultRecord>
  /** Every tool call the model made, by id. */
  toolCalls: Map<string, LoggedToolCall & { turnId: string }>
  /** The turn that started and neither finished nor was cancelled: a cut turn, or one in flight. */
  openTurn:
    | {
        turnId: string
        lastAssistant: AssistantRecord | undefined
        callIds: string[]
        /** The turn span's context, when its start was traced. */
        trace: LoggedTrace | undefined
        /** The host that drives the turn now (its last turn.started or turn.resumed). */
        host: string | undefined
        /** Calls of the turn that had no result when it was last resumed: a crash cut them, or they wait. */
        unsettledAtResume: Set<string>
        /** The submitted prompt the turn runs (`host.submit`), absent for a prompt given to `session.send`. */
        input: TurnInputRef | undefined
      }
    | undefined
  /** The seq, in the session's inbox, of the last submitted prompt a turn took: later ones are queued. */
  inboxSeq: number
  turns: number
  /** How the last ended turn ended, if one did. */
  lastTurnEnd: 'finished' | 'cancelled' | undefined
  /** Wake times of durable sleeps, by tool call id, then step name. */
  sleeps: Map<string, Map<string, number>>
  /**
   * Questions by id (`${toolCallId}:${name}`), with their answer once given. An answer
   * the tool's own schema refused is not an answer: the question is open again, and
   * `rejected` says why the last one was refused.
   */
  questions: Map<string, QuestionState>
  /** Approvals by tool call id (calls of tools with `needsApproval`), with their decision once given. */
  approvals: Map<string, ApprovalState>
  /** Calls of the open turn that wait on purpose, by tool call id; cleared when the call settles. */
  parked: Map<string, ParkedRecord>
  /** Calls that had not started when their batch parked. */
  notStarted: Set<string>
  /** For an agent tool's session: the call that runs it. */
  parent: { sessionId: string; toolCallId: string } | null
  /** Calls of ended turns that never got a result (closed with a synthetic tool message). */
  closedCalls: Set<string>
  /** Names of the secrets tools of this session read (`harness.secret.used`); never their values. */
  secretNames: Set<string>
  /** Seam (outcome-records.ts): intents of steps with `verify` or `once`, and rollbacks of calls, by tool call id. */
  outcomes: OutcomeState
}

/** A question of the session and where it stands. */
export interface QuestionState {
  ask: AskRecord
  /** The answer the question took; undefined while it is open. */
  answer: AnswerRecord | undefined
  /** The last answer the tool's own schema refused, if any. */
  rejected: AnswerRejectedRecord | undefined
}

/** An approval of the session and where it stands. */
export interface ApprovalState {
  request: ApprovalRequestedRecord
  /** The decision the call took; undefined while it waits. */
  decision: ApprovalDecidedRecord | undefined
  /**
   * How many times a host took the turn over after the decision (`harness.turn.resumed`).
   * The first take-over is the run that acts on the decision; the batch cannot have run
   * before it. From the second on (after a crash of that run) an approved call may have
   * started, so the replay rules decide whether it runs again.
   */
  runsSinceDecision: number
}

/** TanStack AI's id of the approval of a call (the `id` of its interrupt). */
export const approvalId = (toolCallId: string) => `approval_${toolCallId}`

/** The id of a question: unique in its session. */
export const questionId = (toolCallId: string, name: string) => `${toolCallId}:${name}`

/** Which submitted prompt a turn runs: its id and its seq in the session's inbox. */
export interface TurnInputRef {
  inputId: string
  inboxSeq: number
}

function inputRefOf(value: unknown): TurnInputRef | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { inputId, inboxSeq } = value as Record<string, unknown>
  return typeof inputId === 'string' && typeof inboxSeq === 'number' ? { inputId, inboxSeq } : undefined
}

export function emptyState(): SessionState {
  return {
    harness: undefined,
    opened: undefined,
    nextSeq: 1,
    messages: [],
    steps: new Map(),
    stepFailures: new Map(),
    stepStarts: new Map(),
    results: new Map(),
    toolCalls: new Map(),
    openTurn: undefined,
    inboxSeq: 0,
    turns: 0,
    lastTurnEnd: undefined,
    sleeps: new Map(),
    questions: new Map(),
    approvals: new Map(),
    parked: new Map(),
    notStarted: new Set(),
    parent: null,
    closedCalls: new Set(),
    secretNames: new Set(),
    outcomes: emptyOutcomeState(),
  }
}

/** The text the model reads for a logged tool result (as `chat()` builds it). */
export function toolMessageContent(result: JsonValue): string {
  return typeof result === 'string' ? result : JSON.stringify(result)
}

// long: one case per record type in one switch, so the fold of each type reads beside the others
/** Applies one log entry to the state. Unknown (app) record types change nothing here. */
export function applyEntry(state: SessionState, entry: LogEntry): void {
  state.nextSeq = entry.seq + 1
  const record = entry.record as LogRecord & Record<string, unknown>
  switch (record.type) {
    case 'harness.session.opened':
      state.harness = String(record.harness)
      state.opened = record as unknown as SessionOpenedRecord
      state.parent = (record.parent as SessionState['parent']) ?? null
      break
    case 'harness.sleep': {
      const toolCallId = String(record.toolCallId)
      const sleeps = state.sleeps.get(toolCallId) ?? new Map<string, number>()
      sleeps.set(String(record.name), Number(record.wakeAt))
      state.sleeps.set(toolCallId, sleeps)
      break
    }
    case 'harness.ask': {
      const ask = record as unknown as AskRecord
      state.questions.set(questionId(ask.toolCallId, ask.name), { ask, answer: undefined, rejected: undefined })
      break
    }
    case 'harness.answer.rejected': {
      const rejected = record as unknown as AnswerRejectedRecord
      const question = state.questions.get(questionId(rejected.toolCallId, rejected.name))
      if (question) {
        question.answer = undefined
        question.rejected = rejected
      }
      break
    }
    case 'harness.answer': {
      const answer = record as unknown as AnswerRecord
      const question = state.questions.get(questionId(answer.toolCallId, answer.name))
      if (question) question.answer = answer
      break
    }
    case 'harness.approval.requested': {
      const request = record as unknown as ApprovalRequestedRecord
      if (!state.approvals.has(request.toolCallId))
        state.approvals.set(request.toolCallId, { request, decision: undefined, runsSinceDecision: 0 })
      break
    }
    case 'harness.approval.decided': {
      const decision = record as unknown as ApprovalDecidedRecord
      const approval = state.approvals.get(decision.toolCallId)
      // The first decision holds: host.approve refuses a second one, and a stray one changes nothing.
      if (approval && !approval.decision) approval.decision = decision
      break
    }
    case 'harness.parked': {
      const parked = record as unknown as ParkedRecord
      state.parked.set(parked.toolCallId, parked)
      // A batch that waits for approval has not started at all until it is acted on (see `settleCutCalls`);
      // after that its calls are like any others, so they are not marked here.
      if (parked.reason !== 'approval') for (const id of parked.notStarted) state.notStarted.add(id)
      break
    }
    case 'harness.turn.started':
      state.turns++
      state.openTurn = {
        turnId: String(record.turnId),
        lastAssistant: undefined,
        callIds: [],
        trace: loggedTrace(record.trace),
        host: typeof record.host === 'string' ? record.host : undefined,
        unsettledAtResume: new Set(),
        input: inputRefOf(record.input),
      }
      state.inboxSeq = Math.max(state.inboxSeq, state.openTurn.input?.inboxSeq ?? 0)
      for (const m of record.messages as LoggedMessage[]) state.messages.push({ ...m })
      break
    case 'harness.turn.resumed':
      if (state.openTurn && state.openTurn.turnId === record.turnId && typeof record.host === 'string') state.openTurn.host = record.host
      if (state.openTurn) for (const id of state.openTurn.callIds) if (!state.results.has(id)) state.openTurn.unsettledAtResume.add(id)
      for (const approval of state.approvals.values()) if (approval.decision) approval.runsSinceDecision++
      break
    case 'harness.assistant': {
      const assistant = record as unknown as AssistantRecord
      if (state.openTurn) {
        state.openTurn.lastAssistant = assistant
        for (const call of assistant.toolCalls) state.openTurn.callIds.push(call.id)
      }
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
    case 'harness.secret.used':
      state.secretNames.add(String(record.name))
      break
    case 'harness.step': {
      const toolCallId = String(record.toolCallId)
      const steps = state.steps.get(toolCallId) ?? new Map<string, StoredStep>()
      steps.set(String(record.name), { value: record.value as JsonValue | undefined })
      state.steps.set(toolCallId, steps)
      break
    }
    case 'harness.step.failed': {
      const failed = record as unknown as StepFailedRecord
      const failures = state.stepFailures.get(failed.toolCallId) ?? new Map<string, StepFailures>()
      const before = failures.get(failed.name)?.attempts ?? 0
      failures.set(failed.name, { attempts: Math.max(before, Number(failed.attempt)), last: failed })
      state.stepFailures.set(failed.toolCallId, failures)
      break
    }
    case 'harness.step.started': {
      const toolCallId = String(record.toolCallId)
      const starts = state.stepStarts.get(toolCallId) ?? new Map<string, number>()
      starts.set(String(record.name), Math.max(starts.get(String(record.name)) ?? 0, Number(record.attempt)))
      state.stepStarts.set(toolCallId, starts)
      break
    }
    case 'harness.tool.result': {
      const result = record as unknown as ToolResultRecord
      state.results.set(result.toolCallId, result)
      // A settled call never reads its steps again (its logged result answers): keep memory flat over long sessions.
      state.steps.delete(result.toolCallId)
      state.stepFailures.delete(result.toolCallId)
      state.stepStarts.delete(result.toolCallId)
      state.sleeps.delete(result.toolCallId)
      state.parked.delete(result.toolCallId)
      state.notStarted.delete(result.toolCallId)
      forgetCallOutcomes(state.outcomes, result.toolCallId)
      state.messages.push({ role: 'tool', toolCallId: result.toolCallId, content: toolMessageContent(result.result) })
      break
    }
    case 'harness.turn.finished':
    case 'harness.turn.cancelled':
      // A call of an ended turn without a logged result must never look pending to chat(),
      // or the next turn would run it again.
      for (const id of state.openTurn?.callIds ?? []) {
        if (!state.results.has(id) && !state.closedCalls.has(id)) {
          state.closedCalls.add(id)
          state.messages.push({
            role: 'tool',
            toolCallId: id,
            content: JSON.stringify({ error: 'This call ended without a recorded result.' }),
          })
        }
      }
      state.openTurn = undefined
      state.lastTurnEnd = record.type === 'harness.turn.finished' ? 'finished' : 'cancelled'
      state.parked.clear()
      state.notStarted.clear()
      break
    default:
      // Seam (outcome-records.ts): `harness.step.intent` and `harness.rollback`; app records change nothing.
      applyOutcomeRecord(state.outcomes, record)
  }
}

/** A logged trace context, or undefined for anything that is not one (a log written without tracing). */
function loggedTrace(value: unknown): LoggedTrace | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { traceId, spanId, flags } = value as Record<string, unknown>
  if (typeof traceId !== 'string' || !/^[0-9a-f]{32}$/.test(traceId)) return undefined
  if (typeof spanId !== 'string' || !/^[0-9a-f]{16}$/.test(spanId)) return undefined
  return { traceId, spanId, flags: typeof flags === 'number' && Number.isInteger(flags) ? flags & 0xff : 0 }
}

export function foldLog(entries: readonly LogEntry[], state = emptyState()): SessionState {
  for (const entry of entries) applyEntry(state, entry)
  return state
}

/** The first page of an open's read, and the largest page it grows to on a long log. */
export const OPEN_PAGE = { first: 1000, most: 8000 } as const

/**
 * Folds a session's log page by page as it is read, so opening a long session never
 * holds more than one page of raw entries besides the state itself. Pages grow from
 * `pageSize` to `maxPageSize` on a long log (see `forEachPage`).
 */
export async function readAndFold(
  store: HarnessStore,
  sessionId: string,
  pageSize: number = OPEN_PAGE.first,
  maxPageSize: number = Math.max(pageSize, OPEN_PAGE.most),
): Promise<SessionState> {
  const state = emptyState()
  await forEachPage(
    store,
    sessionId,
    pageSize,
    (page) => {
      for (const entry of page) applyEntry(state, entry)
    },
    0,
    maxPageSize,
  )
  return state
}

/** Tool calls of the open turn's last batch that have no logged result yet. */
export function unsettledCalls(state: SessionState): LoggedToolCall[] {
  const last = state.openTurn?.lastAssistant
  if (!last) return []
  return last.toolCalls.filter((call) => !state.results.has(call.id))
}

/** Why the open turn waits, if it waits on purpose: the parked call that is not yet settled. */
export function parkedCall(state: SessionState): ParkedRecord | undefined {
  for (const parked of state.parked.values()) if (!state.results.has(parked.toolCallId)) return parked
  return undefined
}

/** A question that waits for its answer (see `openWaits`). */
export interface OpenQuestion {
  sessionId: string
  /** What `host.answer` takes: `${toolCallId}:${name}`. */
  questionId: string
  toolCallId: string
  name: string
  message: string
  /** The JSON Schema the answer must match. */
  schema: AskRecord['schema']
  /** Why the last answer was refused by the tool's own schema, if it was. */
  rejected?: string
}

/** A tool call that waits for approval (see `openWaits`). */
export interface OpenApproval {
  sessionId: string
  toolCallId: string
  /** TanStack AI's approval id: `approval_${toolCallId}`. */
  approvalId: string
  toolName: string
  /** The call's arguments as the log keeps them (secrets removed); the raw text when they are not JSON. */
  input: JsonValue
}

/** What a session's open turn waits for from a person. */
export interface OpenWaits {
  questions: OpenQuestion[]
  approvals: OpenApproval[]
}

/**
 * Whether the replay rules count this call of the open turn as cut, whatever its tool: it
 * had no result when a host last took the turn over, and it was not waiting (a park of its
 * own, a later call of a parked batch, a batch whose approvals are not yet acted on, a
 * denied call). Each tool's policy then decides what a cut call gets (see `settleCutCalls`).
 */
export function cutAtResume(state: SessionState, toolCallId: string): boolean {
  const open = state.openTurn
  if (!open?.unsettledAtResume.has(toolCallId) || state.results.has(toolCallId)) return false
  const batch = open.lastAssistant?.toolCalls ?? []
  const approvalsPending = batch.some((c) => {
    const approval = state.approvals.get(c.id)
    // The take-over right after the decision is the run that acts on it: nothing of the batch ran before.
    return approval !== undefined && (!approval.decision || approval.runsSinceDecision < 2)
  })
  if (approvalsPending || state.approvals.get(toolCallId)?.decision?.approved === false) return false
  const parked = state.parked.get(toolCallId)
  // An approval's park is over once acted on; any other park of the call keeps it waiting.
  return !((parked && parked.reason !== 'approval') || state.notStarted.has(toolCallId))
}

/**
 * What a person can answer or decide in a session now: the questions without an answer
 * and the approvals without a decision, of its open turn. Give it the session's id and its entries
 * (`session.entries()`, or a store's `read`) or an already folded state. An ended turn
 * waits for nothing, so its questions and approvals are not listed.
 */
export function openWaits(sessionId: string, source: SessionState | readonly LogEntry[]): OpenWaits {
  const state = Array.isArray(source) ? foldLog(source as readonly LogEntry[]) : (source as SessionState)
  const id = sessionId
  const waits: OpenWaits = { questions: [], approvals: [] }
  const turnId = state.openTurn?.turnId
  if (turnId === undefined) return waits
  const live = (toolCallId: string) => state.toolCalls.get(toolCallId)?.turnId === turnId && !state.results.has(toolCallId)
  for (const [qid, question] of state.questions) {
    if (question.answer || !live(question.ask.toolCallId)) continue
    const open: OpenQuestion = {
      sessionId: id,
      questionId: qid,
      toolCallId: question.ask.toolCallId,
      name: question.ask.name,
      message: question.ask.message,
      schema: question.ask.schema,
    }
    if (question.rejected) open.rejected = question.rejected.reason
    waits.questions.push(open)
  }
  for (const approval of openApprovalsOf(state)) {
    const call = state.toolCalls.get(approval.toolCallId)
    waits.approvals.push({
      sessionId: id,
      toolCallId: approval.toolCallId,
      approvalId: approvalId(approval.toolCallId),
      toolName: approval.toolName,
      input: callInput(call?.arguments ?? ''),
    })
  }
  return waits
}

/** The approval requests of the open turn that wait for a decision, in the order they were logged. */
export function openApprovalsOf(state: SessionState): ApprovalRequestedRecord[] {
  const turnId = state.openTurn?.turnId
  if (turnId === undefined) return []
  const open: ApprovalRequestedRecord[] = []
  for (const approval of state.approvals.values()) {
    const { toolCallId } = approval.request
    if (approval.decision || state.results.has(toolCallId) || state.toolCalls.get(toolCallId)?.turnId !== turnId) continue
    open.push(approval.request)
  }
  return open
}

/** A call's arguments as JSON, as TanStack AI gives a tool its input; the text itself when it is not JSON. */
export function callInput(args: string): JsonValue {
  try {
    return JSON.parse(args.trim() || '{}') as JsonValue
  } catch {
    return args
  }
}
