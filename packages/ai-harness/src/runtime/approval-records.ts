import type { JsonObject } from '../json/json-types.js'
import type { ParkWait } from './park-wait.js'

/**
 * The approval feature's part of the log: a call of a tool with `needsApproval` asks for a
 * decision, and a person gives it; how the fold keeps them in a call's journal. The gate
 * that writes them is `approval-gate.ts`; the replay rule that reads them is `cutAtResume`.
 */

/**
 * A call of a tool with `needsApproval` waits for a person to approve or deny it. It is
 * logged with the assistant message that made the call (or before the call would run),
 * so after a crash the call still waits: it is neither run nor cut. The approval's id on
 * the stream is TanStack AI's: `approval_${toolCallId}`.
 */
export interface ApprovalRequestedRecord extends JsonObject {
  type: 'harness.approval.requested'
  toolCallId: string
  toolName: string
  at: number
}

/**
 * A person's decision on an approval (`host.approve`). Approved, the call runs; denied,
 * the model gets TanStack AI's denial result (`{ error: 'User declined tool execution' }`)
 * and the tool does not run. A call takes one decision.
 *
 * `reason` (absent when none was given) is the person's note, free of the session's secrets.
 */
export interface ApprovalDecidedRecord extends JsonObject {
  type: 'harness.approval.decided'
  toolCallId: string
  approved: boolean
  at: number
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

/** A call's approval (calls of tools with `needsApproval`), with its decision once given. */
export interface ApprovalJournal {
  approval: ApprovalState | undefined
}

export function foldApprovalRequested(call: ApprovalJournal, request: ApprovalRequestedRecord): void {
  call.approval ??= { request, decision: undefined, runsSinceDecision: 0 }
}

export function foldApprovalDecided(call: ApprovalJournal | undefined, decision: ApprovalDecidedRecord): void {
  // The first decision holds: host.approve refuses a second one, and a stray one changes nothing.
  if (call?.approval && !call.approval.decision) call.approval.decision = decision
}

/** A host took the turn over: a decided approval counts one more run since its decision. */
export function foldTakeOver(call: ApprovalJournal): void {
  if (call.approval?.decision) call.approval.runsSinceDecision++
}

/**
 * Whether the call's approval keeps its batch from having run: no decision yet, or the
 * decision is fresh (the take-over right after it is the run that acts on it).
 */
export function holdsBatch(approval: Readonly<ApprovalState> | undefined): boolean {
  return approval !== undefined && (!approval.decision || approval.runsSinceDecision < 2)
}

/** The approval feature's wakeup rule: a batch of calls waits for a person until every approval is decided. */
export function approvalWait(undecided: number): ParkWait {
  return { kind: 'person', open: undecided > 0 }
}
