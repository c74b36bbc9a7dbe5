import type { LogEntry } from '../contract/types.js'
import { approvalId } from './approval-records.js'
import { questionId } from './ask-records.js'
import { callInput, type OpenQuestion, type OpenWaits, openApprovalsOf } from './fold-views.js'
import { foldLog } from './session-fold.js'
import type { SessionState } from './session-state.js'

/**
 * What a person can answer or decide in a session now: the questions without an answer
 * and the approvals without a decision, of its open turn. Give it the session's id and its entries
 * (`session.entries()`, or a store's `read`) or an already folded state. An ended turn
 * waits for nothing, so its questions and approvals are not listed.
 */
export function openWaits(sessionId: string, source: SessionState | readonly LogEntry[]): OpenWaits {
  const state: SessionState = isEntries(source) ? foldLog(source) : source
  const waits: OpenWaits = { questions: [], approvals: [] }
  const turnId = state.openTurn?.turnId
  if (turnId === undefined) return waits
  for (const call of state.calls.values()) {
    if (call.call?.turnId !== turnId || call.result) continue
    for (const [name, question] of call.questions ?? []) {
      if (question.answer) continue
      const open: OpenQuestion = {
        sessionId,
        questionId: questionId(call.id, name),
        toolCallId: call.id,
        name: question.ask.name,
        message: question.ask.message,
        schema: question.ask.schema,
      }
      if (question.rejected) open.rejected = question.rejected.reason
      waits.questions.push(open)
    }
  }
  for (const approval of openApprovalsOf(state)) {
    waits.approvals.push({
      sessionId,
      toolCallId: approval.toolCallId,
      approvalId: approvalId(approval.toolCallId),
      toolName: approval.toolName,
      input: callInput(state.calls.get(approval.toolCallId)?.call?.arguments ?? ''),
    })
  }
  return waits
}

const isEntries = (source: SessionState | readonly LogEntry[]): source is readonly LogEntry[] => Array.isArray(source)
