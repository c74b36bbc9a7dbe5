import { HarnessError } from '../contract/errors.js'
import { assertLogId, isWellFormedText } from '../contract/prepare-batch.js'
import type { Clock } from '../contract/types.js'
import { logPersonInput, type PersonInputRules, secretsOf } from './person-input.js'
import type { ApprovalDecidedRecord } from './records.js'
import type { GuardedStore } from './store-boundary.js'

/** What `host.approve` takes. */
export interface ApproveOptions {
  sessionId: string
  /** The call that waits: `toolCallId` of the `harness.approval` event (or of TanStack AI's approval interrupt). */
  toolCallId: string
  /** True runs the call; false gives the model TanStack AI's denial result, and the tool does not run. */
  approved: boolean
  /** A note kept in the log with the decision. It must not hold a secret of the session. */
  reason?: string
}

/**
 * Logs the decision on a call that waits for approval and makes the session due at once,
 * so a worker (or any host that opens it) goes on with the turn. As for an answer
 * (`logPersonInput`), each attempt reads the log and decides from it: the same decision
 * already in the log (a reply lost after the append landed, or a retry) is a success,
 * and the wakeup is scheduled whatever happened before.
 */
export async function approveCall(store: GuardedStore, clock: Clock, rules: PersonInputRules, options: ApproveOptions): Promise<void> {
  const { sessionId, toolCallId, approved, reason } = options ?? ({} as never)
  assertLogId(sessionId, store.limits)
  if (typeof toolCallId !== 'string' || toolCallId === '')
    throw new HarnessError('INVALID_ARGUMENT', 'approve needs the toolCallId of the approval event (a non-empty string).')
  if (typeof approved !== 'boolean')
    throw new HarnessError('INVALID_ARGUMENT', 'approve needs approved: true (run the call) or false (deny it).')
  if (reason !== undefined && (typeof reason !== 'string' || !isWellFormedText(reason)))
    throw new HarnessError('INVALID_ARGUMENT', 'approve takes reason as a string of well-formed Unicode, or no reason.')
  await logPersonInput(store, clock, sessionId, 'approving', async (state) => {
    const call = state.calls.get(toolCallId)
    const approval = call?.approval
    if (!approval) {
      throw new HarnessError(
        'APPROVAL_NOT_FOUND',
        `Session ${JSON.stringify(sessionId)} has no call ${JSON.stringify(toolCallId)} that waits for approval; use the toolCallId of the approval event.`,
      )
    }
    if (approval.decision) {
      // The same decision already in the log is this one: its reply was lost, or the caller tries again.
      if (approval.decision.approved === approved && (approval.decision.reason ?? undefined) === reason) return undefined
      throw new HarnessError(
        'ALREADY_DECIDED',
        `The call ${JSON.stringify(toolCallId)} was ${approval.decision.approved ? 'approved' : 'denied'} already; a call takes one decision.`,
      )
    }
    if (!state.openTurn || state.openTurn.turnId !== call?.call?.turnId || call.result) {
      throw new HarnessError(
        'APPROVAL_NOT_FOUND',
        `The call ${JSON.stringify(toolCallId)} belongs to a turn that has ended (finished or cancelled); nobody waits for its approval.`,
      )
    }
    if (reason !== undefined) {
      const held = (await secretsOf(rules, sessionId, state)).find(reason, 'reason')
      if (held) {
        throw new HarnessError(
          'RECORD_SECRET',
          `The reason holds a secret of the session (${held.encoding}); the log must not keep it. Give the reason without the secret.`,
        )
      }
    }
    const record: ApprovalDecidedRecord = { type: 'harness.approval.decided', toolCallId, approved, at: clock.now() }
    if (reason !== undefined) record.reason = reason
    return record
  })
}
