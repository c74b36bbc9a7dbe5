import type { HarnessStore } from '../contract/types.js'
import { agentMetaOf, childSessionId } from './agent-tool.js'
import { cutCancel, rollBackOnCancel } from './cancel-rollback.js'
import type { RollbackRecord } from './outcome-records.js'
import { unsettledCalls } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import { durableNow } from './store-boundary.js'

/**
 * Ends the session's open turn as cancelled, once its run is stopped and the log's state
 * is known: the turn's calls undo their finished steps, the children of its agent calls
 * end their turns, then the turn's end is logged and its wakeup cancelled. `reason` is
 * the text the user gave; its secrets are removed before it is logged. `store` is the
 * session's store without spans, where a child's log is looked up.
 */
export async function cancelOpenTurn(runtime: SessionRuntime, store: HarnessStore, reason: unknown): Promise<void> {
  const open = runtime.state.openTurn
  if (!open) return
  const kept = runtime.scanner.redactText(typeof reason === 'string' ? reason : String(reason))
  await markChildCancel(runtime, store, kept, open.turnId)
  // Seam (cancel-rollback.ts): the calls of the cancelled turn undo their finished steps (`undo`) first.
  await rollBackOnCancel(runtime, (name) => runtime.harness.toolNamed(name), kept, open.turnId)
  await cancelChildren(runtime, store)
  await runtime.writer.append([{ type: 'harness.turn.cancelled', turnId: open.turnId, at: runtime.clock.now(), reason: kept }])
}

/**
 * Before a cancel undoes anything in a child agent's session, the parent logs it: a
 * rollback record of the agent call that names the cancel. A crash anywhere in the
 * child's rollback then leaves a parent whose run after it (`cutCancel`) finishes every
 * child's rollback and ends the turn cancelled, instead of running the turn on. Its wakeup
 * is made due now first: a parent that waits for its child has none, and a worker must
 * find the cut cancel. Only a turn with an agent call whose child logged anything writes
 * it, once per cancel (a cancel already in the log is not logged again); any other cancel
 * writes what it wrote before.
 */
export async function markChildCancel(runtime: SessionRuntime, store: HarnessStore, reason: string, turnId: string): Promise<void> {
  for (const call of unsettledCalls(runtime.state)) {
    if (!agentMetaOf(runtime.harness.toolNamed(call.name))) continue
    if ((await store.read(childSessionId(runtime.sessionId, call.id), { after: 0, limit: 1 })).length === 0) continue
    await store.wakeups?.schedule(runtime.sessionId, await durableNow(store, runtime.clock))
    if (cutCancel(runtime) !== undefined) return
    const record: RollbackRecord = {
      type: 'harness.rollback',
      toolCallId: call.id,
      error: `The session was cancelled: ${reason}`,
      at: runtime.clock.now(),
      cancel: { turnId, reason },
    }
    await runtime.writer.append([record])
    return
  }
}

/** Why the turn of a child whose parent's call ended without it was ended. */
export const ORPHAN_REASON = 'The agent call that ran this session ended without waiting for it.'

/**
 * Ends the open turns of the children of this turn's unsettled agent calls, before the
 * turn itself ends: a child must not run on (ask, act, take an answer) for a call that
 * no longer waits for it. Deepest first, so a crash halfway leaves the rest still open.
 * `store` is where a child's log is looked up.
 */
export async function cancelChildren(runtime: SessionRuntime, store: HarnessStore): Promise<void> {
  const { state, harness, sessionId } = runtime
  for (const call of unsettledCalls(state)) {
    const agent = agentMetaOf(harness.toolNamed(call.name))
    if (!agent) continue
    const childId = childSessionId(sessionId, call.id)
    // A child that never wrote its log never ran: opening it would create it.
    if ((await store.read(childId, { after: 0, limit: 1 })).length === 0) continue
    const child = await runtime.openChild(agent.harness, childId, { sessionId, toolCallId: call.id })
    try {
      if (child.needsRecovery) await child.cancel(ORPHAN_REASON)
    } finally {
      await child.close()
    }
  }
}
