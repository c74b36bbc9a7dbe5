import { forEachPage } from '../contract/read-all.js'
import type { HarnessStore, LogEntry } from '../contract/types.js'
import { foldApprovalDecided, foldApprovalRequested, foldTakeOver } from './approval-records.js'
import { foldAnswer, foldAnswerRejected, foldAsk } from './ask-records.js'
import { type Journals, settleCall, toolMessageContent } from './call-state.js'
import { applyOutcomeRecord, forgetCallOutcomes } from './outcome-records.js'
import { HARNESS_RECORD_TYPES } from './record-types.js'
import type {
  AssistantRecord,
  HarnessRecord,
  ParkedRecord,
  SessionOpenedRecord,
  ToolResultRecord,
  TurnCancelledRecord,
  TurnFinishedRecord,
  TurnResumedRecord,
  TurnStartedRecord,
} from './records.js'
import {
  emptyState,
  type FoldedMessage,
  journalsOf,
  type LoggedTrace,
  type OpenTurn,
  type SessionFold,
  type TurnInputRef,
} from './session-state.js'
import { foldSleep } from './sleep-records.js'
import { foldStep, foldStepFailed, foldStepStarted } from './step-records.js'

/**
 * The fold: a session's log, record by record, into its state (`SessionFold`): the
 * session's own fields, and one journal per tool call (`CallState`). Each record type has
 * its case in one exhaustive table (`FOLDS`); the cases of a feature's records live beside their
 * types (step-records.ts, sleep-records.ts, ask-records.ts, approval-records.ts,
 * outcome-records.ts). Nothing else writes the state.
 */

// The fold's entry point: the state, its journals and the views of it, for the runtime's readers.
export type { ApprovalState } from './approval-records.js'
export { approvalId } from './approval-records.js'
export { type QuestionState, questionId } from './ask-records.js'
export { type CallState, type CallView, toolMessageContent, type TurnCall } from './call-state.js'
export {
  callInput,
  type OpenApproval,
  type OpenQuestion,
  type OpenWaits,
  openApprovalsOf,
  parkedCall,
  unsettledCalls,
} from './fold-views.js'
export { cutAtResume } from './replay-rules.js'
export {
  emptyState,
  type FoldedMessage,
  type LoggedTrace,
  type OpenTurn,
  SessionFold,
  type SessionState,
  type TurnInputRef,
} from './session-state.js'
export type { StepFailures, StoredStep } from './step-records.js'

/** The fold of one record type, given the record narrowed to that type. */
type FoldOf<T extends HarnessRecord['type']> = (state: SessionFold, calls: Journals, record: Extract<HarnessRecord, { type: T }>) => void

/**
 * One fold per record type; it compiles only when every type of `HarnessRecord` has its
 * own, so none is left out. A table, not a switch: the type of a record read from a store
 * is a fresh string, which a switch compares case by case, and a map finds in one lookup.
 */
const FOLDS: { readonly [T in HarnessRecord['type']]: FoldOf<T> } = {
  'harness.session.opened': (state, _calls, record) => foldOpened(state, record),
  'harness.turn.started': (state, _calls, record) => foldTurnStarted(state, record),
  'harness.turn.resumed': foldTurnResumed,
  'harness.assistant': foldAssistant,
  'harness.turn.finished': foldTurnEnded,
  'harness.turn.cancelled': foldTurnEnded,
  'harness.secret.used': (state, _calls, record) => {
    state.secretNames.add(String(record.name))
  },
  'harness.step': (_state, calls, record) => foldStep(calls.of(record.toolCallId), record),
  'harness.step.failed': (_state, calls, record) => foldStepFailed(calls.of(record.toolCallId), record),
  'harness.step.started': (_state, calls, record) => foldStepStarted(calls.of(record.toolCallId), record),
  'harness.step.intent': (state, _calls, record) => applyOutcomeRecord(state.outcomes, record),
  'harness.rollback': (state, _calls, record) => applyOutcomeRecord(state.outcomes, record),
  'harness.sleep': (_state, calls, record) => foldSleep(calls.of(record.toolCallId), record),
  'harness.ask': (_state, calls, record) => foldAsk(calls.of(record.toolCallId), record),
  'harness.answer': (_state, calls, record) => foldAnswer(calls.known(record.toolCallId), record),
  'harness.answer.rejected': (_state, calls, record) => foldAnswerRejected(calls.known(record.toolCallId), record),
  'harness.approval.requested': (_state, calls, record) => foldApprovalRequested(calls.of(record.toolCallId), record),
  'harness.approval.decided': (_state, calls, record) => {
    const call = calls.known(record.toolCallId)
    foldApprovalDecided(call, record)
    if (call?.approval?.decision) calls.noteDecision(call)
  },
  'harness.parked': (_state, calls, record) => foldParked(calls, record),
  'harness.tool.result': foldResult,
}

/** A record's fold by its type: only the types of `HarnessRecord` have one; an app's records, and types this runtime does not know, do not. */
const FOLD_BY_TYPE: ReadonlyMap<string, (state: SessionFold, calls: Journals, record: HarnessRecord) => void> = new Map(
  HARNESS_RECORD_TYPES.map((type) => [type, FOLDS[type] as (state: SessionFold, calls: Journals, record: HarnessRecord) => void]),
)

/** Applies one log entry to the state. App record types change nothing but the next seq. */
export function applyEntry(state: SessionFold, entry: LogEntry): void {
  foldEntry(state, journalsOf(state), entry)
}

function foldEntry(state: SessionFold, calls: Journals, entry: LogEntry): void {
  state.nextSeq = entry.seq + 1
  const fold = FOLD_BY_TYPE.get(entry.record.type)
  if (fold) fold(state, calls, entry.record as HarnessRecord)
}

/** Applies a page of entries in order (`applyEntry` on each). */
export function applyEntries(state: SessionFold, entries: readonly LogEntry[]): void {
  const calls = journalsOf(state)
  for (const entry of entries) foldEntry(state, calls, entry)
}

function foldOpened(state: SessionFold, record: SessionOpenedRecord): void {
  state.harness = String(record.harness)
  state.opened = record
  // A log of an older runtime may have no `parent`.
  state.parent = record.parent ?? null
}

function foldTurnStarted(state: SessionFold, record: TurnStartedRecord): void {
  state.turns++
  const open: OpenTurn = {
    turnId: record.turnId,
    lastAssistant: undefined,
    callIds: [],
    trace: loggedTrace(record.trace),
    host: typeof record.host === 'string' ? record.host : undefined,
    unsettledAtResume: new Set(),
    input: inputRefOf(record.input),
  }
  state.openTurn = open
  state.inboxSeq = Math.max(state.inboxSeq, open.input?.inboxSeq ?? 0)
  for (const m of record.messages) state.messages.push({ ...m })
}

function foldTurnResumed(state: SessionFold, calls: Journals, record: TurnResumedRecord): void {
  const open = state.openTurn
  if (open) {
    if (open.turnId === record.turnId && typeof record.host === 'string') open.host = record.host
    for (const id of open.callIds) if (!calls.known(id)?.result) open.unsettledAtResume.add(id)
  }
  for (const call of calls.decided()) foldTakeOver(call)
}

function foldAssistant(state: SessionFold, calls: Journals, record: AssistantRecord): void {
  const made = record.toolCalls
  const message: FoldedMessage = { role: 'assistant', content: record.text === '' ? null : record.text }
  if (made.length > 0) {
    // One pass over the calls: the turn's ids, the message's calls, each call's journal.
    const toolCalls: NonNullable<FoldedMessage['toolCalls']> = new Array(made.length)
    for (let i = 0; i < made.length; i++) {
      const c = made[i]!
      state.openTurn?.callIds.push(c.id)
      toolCalls[i] = { id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }
      calls.of(c.id).call = { ...c, turnId: record.turnId }
    }
    message.toolCalls = toolCalls
  }
  if (state.openTurn) state.openTurn.lastAssistant = record
  state.messages.push(message)
}

function foldParked(calls: Journals, record: ParkedRecord): void {
  const call = calls.of(record.toolCallId)
  call.parked = record
  calls.noteWait(call)
  // A batch that waits for approval has not started at all until it is acted on (see `settleCutCalls`);
  // after that its calls are like any others, so they are not marked here.
  if (record.reason === 'approval') return
  for (const id of record.notStarted) {
    const later = calls.of(id)
    later.notStarted = true
    calls.noteWait(later)
  }
}

function foldResult(state: SessionFold, calls: Journals, record: ToolResultRecord): void {
  settleCall(calls.of(record.toolCallId), record)
  forgetCallOutcomes(state.outcomes, record.toolCallId)
  state.messages.push({ role: 'tool', toolCallId: record.toolCallId, content: toolMessageContent(record.result) })
}

function foldTurnEnded(state: SessionFold, calls: Journals, record: TurnFinishedRecord | TurnCancelledRecord): void {
  // A call of an ended turn without a logged result must never look pending to chat(),
  // or the next turn would run it again.
  for (const id of state.openTurn?.callIds ?? []) {
    const call = calls.of(id)
    if (call.result || call.closed) continue
    call.closed = true
    state.messages.push({ role: 'tool', toolCallId: id, content: JSON.stringify({ error: 'This call ended without a recorded result.' }) })
  }
  state.openTurn = undefined
  state.lastTurnEnd = record.type === 'harness.turn.finished' ? 'finished' : 'cancelled'
  calls.endWaits()
}

/** A logged trace context, or undefined for anything that is not one (a log written without tracing). */
function loggedTrace(value: unknown): LoggedTrace | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { traceId, spanId, flags } = value as Record<string, unknown>
  if (typeof traceId !== 'string' || !/^[0-9a-f]{32}$/.test(traceId)) return undefined
  if (typeof spanId !== 'string' || !/^[0-9a-f]{16}$/.test(spanId)) return undefined
  return { traceId, spanId, flags: typeof flags === 'number' && Number.isInteger(flags) ? flags & 0xff : 0 }
}

function inputRefOf(value: unknown): TurnInputRef | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const { inputId, inboxSeq } = value as Record<string, unknown>
  return typeof inputId === 'string' && typeof inboxSeq === 'number' ? { inputId, inboxSeq } : undefined
}

/** Folds entries into `state` (a new one by default) and returns it. */
export function foldLog(entries: readonly LogEntry[], state: SessionFold = emptyState()): SessionFold {
  applyEntries(state, entries)
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
): Promise<SessionFold> {
  const state = emptyState()
  await forEachPage(store, sessionId, pageSize, (page) => applyEntries(state, page), 0, maxPageSize)
  return state
}
