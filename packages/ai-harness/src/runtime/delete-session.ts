import { isHarnessError } from '../contract/errors.js'
import { assertLogId } from '../contract/prepare-batch.js'
import type { StoreLimits } from '../contract/types.js'
import { agentMetaOf, childSessionId } from './agent-tool.js'
import type { Harness } from './harness.js'
import { readAndFold, type SessionState } from './session-fold.js'
import { inboxLogId } from './inbox-log.js'
import type { GuardedStore } from './store-boundary.js'

/**
 * Deletes a session and the sessions of its agent-tool calls, children first: if this
 * fails halfway, the parent's log still names them for a second try.
 */
export async function deleteSessionTree(store: GuardedStore, harnesses: readonly Harness[], sessionId: string): Promise<void> {
  const state = await readAndFold(store, sessionId)
  for (const childId of agentChildren(sessionId, state, harnesses, store.limits)) {
    if ((await store.read(childId, { limit: 1 })).length > 0) await deleteSessionTree(store, harnesses, childId)
  }
  // The inbox first: a log left without its session would be folded into a new session of the same id.
  await store.delete(inboxLogId(sessionId))
  await store.delete(sessionId)
}

/** The sessions of a session's agent-tool calls (every call's, when the harness is not known here). */
function agentChildren(sessionId: string, state: SessionState, harnesses: readonly Harness[], limits: StoreLimits): string[] {
  const harness = harnesses.find((h) => h.name === state.harness)
  const ids: string[] = []
  for (const { id, call } of state.calls.values()) {
    if (!call || (harness && !agentMetaOf(harness.toolNamed(call.name)))) continue
    ids.push(childSessionId(sessionId, id))
  }
  return ids.filter((id) => {
    try {
      assertLogId(id, limits)
      return true
    } catch (error) {
      if (isHarnessError(error, 'INVALID_ARGUMENT')) return false
      throw error
    }
  })
}
