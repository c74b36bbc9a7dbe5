import type { HarnessStore } from '../contract/types.js'
import { agentMetaOf, childSessionId } from './agent-tool.js'
import type { Harness } from './harness.js'
import { parkedCall, readAndFold, type SessionState, unsettledCalls } from './session-fold.js'

/**
 * Where the child session of an agent-tool call stands, read from its log:
 *
 * - `new`: no turn was logged, so nothing of it ran; a new call starts it (a call a crash
 *   cut gets the tool error all the same: see `cutAtResume` in replay-rules.ts).
 * - `finished`: its turn finished; the call takes its answer.
 * - `ended`: its turn was cancelled (a cut call, or a person): it gave no answer.
 * - `waiting`: it waits for a person (a question in its open turn, answered or not,
 *   a parked call, or an agent call whose own child waits or has finished since): the
 *   call keeps its place.
 * - `cut`: its turn is open and it was running when its host stopped: nobody knows what
 *   it did, so the call gets a tool error and the child never runs again.
 */
export type ChildStanding = 'new' | 'finished' | 'ended' | 'waiting' | 'cut'

export async function childStanding(store: HarnessStore, child: Harness, childId: string, state: SessionState): Promise<ChildStanding> {
  if (state.turns === 0) return 'new'
  if (!state.openTurn) return state.lastTurnEnd === 'finished' ? 'finished' : 'ended'
  return (await waitsForPerson(store, child, childId, state)) ? 'waiting' : 'cut'
}

/** A session whose open turn waits for a person, itself or through an agent call's child (read from the store). */
export async function waitsForPerson(store: HarnessStore, harness: Harness, sessionId: string, state: SessionState): Promise<boolean> {
  const open = state.openTurn
  if (!open) return false
  if (parkedCall(state)) return true
  for (const id of open.callIds) {
    const call = state.calls.get(id)
    if (call?.questions?.size && !call.result) return true
  }
  for (const call of unsettledCalls(state)) {
    const agent = agentMetaOf(harness.toolNamed(call.name))
    if (!agent) continue
    const childId = childSessionId(sessionId, call.id)
    const child = await readAndFold(store, childId)
    if (child.nextSeq === 1) continue
    // A child that finished while this session waited on it: this session goes on with its answer.
    if (!child.openTurn && child.lastTurnEnd === 'finished') return true
    if (await waitsForPerson(store, agent.harness, childId, child)) return true
  }
  return false
}

/** The tool error of an agent call whose child was cut while it ran; the call is settled as cut. */
export class AgentCallCut extends Error {
  override readonly name = 'AgentCallCut'
}
