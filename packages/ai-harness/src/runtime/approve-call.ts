import { HarnessError, isHarnessError } from '../contract/errors.js'
import { assertLogId, isWellFormedText } from '../contract/prepare-batch.js'
import type { Clock } from '../contract/types.js'
import { resolvableSecrets } from '../secrets/session-secrets.js'
import type { Harness } from './harness.js'
import type { ApprovalDecidedRecord } from './records.js'
import { readAndFold } from './session-fold.js'
import { durableNow, type GuardedStore, isOutcomeUnknown } from './store-boundary.js'

const ATTEMPTS = 5

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
 * so a worker (or any host that opens it) goes on with the turn. Like an answer, each
 * attempt reads the log and decides from it: the same decision already in the log (a
 * reply lost after the append landed, or a retry) is a success, and the wakeup is
 * scheduled whatever happened before.
 */
export async function approveCall(
  store: GuardedStore,
  clock: Clock,
  harnesses: readonly Harness[],
  options: ApproveOptions,
): Promise<void> {
  const { sessionId, toolCallId, approved, reason } = options ?? ({} as never)
  assertLogId(sessionId, store.limits)
  if (typeof toolCallId !== 'string' || toolCallId === '')
    throw new HarnessError('INVALID_ARGUMENT', 'approve needs the toolCallId of the approval event (a non-empty string).')
  if (typeof approved !== 'boolean')
    throw new HarnessError('INVALID_ARGUMENT', 'approve needs approved: true (run the call) or false (deny it).')
  if (reason !== undefined && (typeof reason !== 'string' || !isWellFormedText(reason)))
    throw new HarnessError('INVALID_ARGUMENT', 'approve takes reason as a string of well-formed Unicode, or no reason.')
  let failure: unknown
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const state = await readAndFold(store, sessionId)
    const approval = state.approvals.get(toolCallId)
    if (!approval) {
      throw new HarnessError(
        'APPROVAL_NOT_FOUND',
        `Session ${JSON.stringify(sessionId)} has no call ${JSON.stringify(toolCallId)} that waits for approval; use the toolCallId of the approval event.`,
      )
    }
    if (approval.decision) {
      // The same decision already in the log is this one: its reply was lost, or the caller tries again.
      if (approval.decision.approved === approved && (approval.decision.reason ?? undefined) === reason)
        return wake(store, clock, sessionId)
      throw new HarnessError(
        'ALREADY_DECIDED',
        `The call ${JSON.stringify(toolCallId)} was ${approval.decision.approved ? 'approved' : 'denied'} already; a call takes one decision.`,
      )
    }
    const turnId = state.toolCalls.get(toolCallId)?.turnId
    if (!state.openTurn || state.openTurn.turnId !== turnId || state.results.has(toolCallId)) {
      throw new HarnessError(
        'APPROVAL_NOT_FOUND',
        `The call ${JSON.stringify(toolCallId)} belongs to a turn that has ended (finished or cancelled); nobody waits for its approval.`,
      )
    }
    if (reason !== undefined) {
      const secrets = await resolvableSecrets(
        harnesses.find((h) => h.name === state.harness),
        state.secretNames,
      )
      const held = secrets.find(reason, 'reason')
      if (held) {
        throw new HarnessError(
          'RECORD_SECRET',
          `The reason holds a secret of the session (${held.encoding}); the log must not keep it. Give the reason without the secret.`,
        )
      }
    }
    const record: ApprovalDecidedRecord = { type: 'harness.approval.decided', toolCallId, approved, at: clock.now() }
    if (reason !== undefined) record.reason = reason
    try {
      await store.append(sessionId, state.nextSeq, [record])
    } catch (error) {
      // Someone else wrote meanwhile (maybe another decision), or nobody knows whether ours landed: read again and decide.
      if (isHarnessError(error, 'LOG_CONFLICT') || isOutcomeUnknown(error)) {
        failure = error
        continue
      }
      throw error
    }
    return wake(store, clock, sessionId)
  }
  if (isOutcomeUnknown(failure)) throw failure
  throw new HarnessError('SESSION_BUSY', `Session ${JSON.stringify(sessionId)} kept changing while approving; try again.`)
}

async function wake(store: GuardedStore, clock: Clock, sessionId: string): Promise<void> {
  await store.wakeups?.schedule(sessionId, await durableNow(store, clock))
}
