import type { JsonValue } from '../json/json-types.js'
import type { ApprovalRequestedRecord } from './approval-records.js'
import type { AskRecord } from './ask-records.js'
import type { LoggedToolCall, ParkedRecord } from './records.js'
import type { SessionState } from './session-state.js'

/** What readers ask of a folded state: the open turn's unsettled calls, its wait, its open approvals. */

/** Tool calls of the open turn's last batch that have no logged result yet. */
export function unsettledCalls(state: SessionState): LoggedToolCall[] {
  const last = state.openTurn?.lastAssistant
  if (!last) return []
  return last.toolCalls.filter((call) => !state.calls.get(call.id)?.result)
}

/** Why the open turn waits, if it waits on purpose: the parked call that is not yet settled. */
export function parkedCall(state: SessionState): ParkedRecord | undefined {
  for (const parked of state.parked.values()) if (!state.calls.get(parked.toolCallId)?.result) return parked
  return undefined
}

/** The approval requests of the open turn that wait for a decision, in the order of its calls. */
export function openApprovalsOf(state: SessionState): ApprovalRequestedRecord[] {
  const turnId = state.openTurn?.turnId
  if (turnId === undefined) return []
  const open: ApprovalRequestedRecord[] = []
  for (const call of state.calls.values()) {
    if (!call.approval || call.approval.decision || call.result || call.call?.turnId !== turnId) continue
    open.push(call.approval.request)
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
