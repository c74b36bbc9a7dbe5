import { holdsBatch } from './approval-records.js'
import type { SessionState } from './session-state.js'

/**
 * The replay rules: which calls of the open turn a crash cut. Each tool's policy then
 * decides what a cut call gets (`settleCutCalls`); this module decides only whether it
 * was cut.
 */

/**
 * Whether the replay rules count this call of the open turn as cut, whatever its tool: it
 * had no result when a host last took the turn over, and it was not waiting (a park of its
 * own, a later call of a parked batch, a batch whose approvals are not yet acted on, a
 * denied call). See test/unit/replay-rules.test.ts for the table.
 */
export function cutAtResume(state: SessionState, toolCallId: string): boolean {
  const open = state.openTurn
  const call = state.calls.get(toolCallId)
  if (!open?.unsettledAtResume.has(toolCallId) || call?.result) return false
  const batch = open.lastAssistant?.toolCalls ?? []
  if (batch.some((c) => holdsBatch(state.calls.get(c.id)?.approval))) return false
  if (call?.approval?.decision?.approved === false) return false
  // An approval's park is over once acted on; any other park of the call keeps it waiting.
  const waits = call?.parked !== undefined && call.parked.reason !== 'approval'
  return !(waits || call?.notStarted)
}
