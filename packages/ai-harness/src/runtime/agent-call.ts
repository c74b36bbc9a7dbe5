import type { ToolExecutionContext } from '@tanstack/ai'
import { isHarnessError } from '../contract/errors.js'
import { AgentCallCut, childStanding } from './agent-child.js'
import { type AgentMeta, childSessionId } from './agent-tool.js'
import { HARNESS_EVENTS } from './event-names.js'
import type { CallStop, ParkReason } from './run-stop.js'
import { cutAtResume, foldLog } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'

/** What an agent call needs of the tool call it runs in (a `LiveToolCall`). */
export interface AgentCallSite {
  readonly session: SessionRuntime
  readonly toolCallId: string
  /** The call's stop authority: the failures of the session's machinery are noted there. */
  readonly callStop: CallStop
  /** Parks the call: the parked step does not settle while the harness ends the call. */
  park(reason: ParkReason, until: number | null, event: Record<string, unknown>): Promise<never>
}

/**
 * Failures of a child session's machinery that may pass (another host drives the child,
 * a conflict, a store outage): they stop the parent's run, and the parent call keeps its
 * place. Any other failure of the child is a tool error of the parent call.
 */
const PASSING_CHILD_FAILURES = new Set(['LOG_CONFLICT', 'LEASE_LOST', 'LEASE_HELD', 'STORE_UNAVAILABLE', 'SESSION_BUSY'])

function childFailure(stop: CallStop, error: unknown): unknown {
  if (isHarnessError(error) && !PASSING_CHILD_FAILURES.has(error.code)) return error
  return stop.fail(error)
}

/** Why the turn of a child cut while it ran was ended. */
const CUT_CHILD_REASON = 'The agent call that ran this session was cut by a crash; it does not run again.'

/**
 * Runs (or continues) the child session of an agent-tool call. A child that waits for a
 * person parks the parent call; its question is forwarded on the parent's stream.
 */
export async function runAgentCall(
  call: AgentCallSite,
  agent: AgentMeta,
  args: unknown,
  context: ToolExecutionContext | undefined,
): Promise<unknown> {
  const { session, toolCallId, callStop } = call
  const childId = childSessionId(session.sessionId, toolCallId)
  const parkedOnChild = session.state.calls.get(toolCallId)?.parked?.reason === 'agent'
  if (parkedOnChild) {
    // The call waited on its child, so the child's log exists, unless it was deleted: then
    // opening it would bring a deleted session back. Nobody knows what it did.
    const [first] = await callStop.own(() => session.store.read(childId, { after: 0, limit: 1 }))
    if (!first) {
      throw new Error(
        `The session of the agent ${JSON.stringify(agent.harness.name)} (${childId}) was deleted while this call waited for it; nobody knows what it did. Check its effects before you call it again.`,
      )
    }
  }
  if (!parkedOnChild && cutAtResume(session.state, toolCallId)) {
    // A crash cut the call before its child logged anything: the seed gives it the tool
    // error, and the child session is never created for it.
    const [first] = await callStop.own(() => session.store.read(childId, { after: 0, limit: 1 }))
    if (!first) throw new AgentCallCut(session.harness.cutToolError)
  }
  let child: Awaited<ReturnType<SessionRuntime['openChild']>>
  try {
    child = await session.openChild(agent.harness, childId, { sessionId: session.sessionId, toolCallId })
  } catch (error) {
    throw childFailure(callStop, error)
  }
  let cut = false
  let parked: Record<string, unknown> | undefined
  try {
    const approvals: Array<Record<string, unknown>> = []
    const forward = (chunk: { type: string; name?: string; value?: unknown }) => {
      if (chunk.type === 'CUSTOM' && chunk.name === HARNESS_EVENTS.question) {
        // The parent's stream redacts it, keeping its ids and names.
        context?.emitCustomEvent?.(HARNESS_EVENTS.question, chunk.value as Record<string, unknown>)
      }
      // chat() would put the parent's call id on a forwarded event: the parent's park streams these as they are.
      if (chunk.type === 'CUSTOM' && chunk.name === HARNESS_EVENTS.approval) approvals.push(chunk.value as Record<string, unknown>)
    }
    let log: Awaited<ReturnType<typeof child.entries>> = []
    try {
      const entries = await child.entries()
      // A call that did not park on its child is new, or was cut by a crash: the child's log
      // says which, and what the seed prescribes (see ChildStanding).
      let standing = parkedOnChild ? 'waiting' : await childStanding(session.store, agent.harness, childId, foldLog(entries))
      // The seed: a cut agent call gets a tool error, even when its child had not started yet.
      if (standing === 'new' && cutAtResume(session.state, toolCallId)) standing = 'ended'
      if (standing === 'cut' || standing === 'ended') {
        // It never runs again: its turn (and those of its own agent children) ends here, before the call settles.
        if (standing === 'cut') await child.cancel(CUT_CHILD_REASON)
        cut = true
      } else {
        const stream = standing === 'new' ? child.send(agent.prompt(args)) : child.resume()
        for await (const chunk of stream) forward(chunk as never)
        if (child.status === 'parked') parked = { childSessionId: childId, approvals }
        else log = await child.entries()
      }
    } catch (error) {
      throw callStop.reason ? error : childFailure(callStop, error)
    }
    if (!parked) {
      if (cut) throw new AgentCallCut(session.harness.cutToolError)
      if (!log.some((e) => e.record.type === 'harness.turn.finished')) {
        throw new Error(`The agent ${JSON.stringify(agent.harness.name)} did not finish its turn.`)
      }
      const answers = log.filter((e) => e.record.type === 'harness.assistant' && (e.record.toolCalls as unknown[]).length === 0)
      return String(answers.at(-1)?.record.text ?? '')
    }
  } finally {
    await child.close().catch(() => {})
  }
  // The child is closed first, then the parent call parks on it.
  return call.park('agent', null, parked)
}
