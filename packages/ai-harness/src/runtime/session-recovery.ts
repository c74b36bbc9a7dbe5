import type { StreamChunk } from '@tanstack/ai'
import { agentMetaOf } from './agent-tool.js'
import { cutCancel, rollBackOnCancel } from './cancel-rollback.js'
import { cancelChildren, markChildCancel, ORPHAN_REASON } from './cancel-turn.js'
import type { ToolResultRecord } from './records.js'
import { cutAtResume, parkedCall, readAndFold, unsettledCalls } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import type { TurnRunControl, TurnRunEnd, TurnRunStream } from './turn-run.js'
import { chatTurn } from './turn-runner.js'
import type { WakeupPolicy } from './wakeup-policy.js'

/**
 * Takes over the open turn of a session: a turn that still waits is left waiting (its
 * wakeup set for when it may go on); otherwise the log records who took it over, the
 * calls a crash cut are settled by the replay rules, and the turn runs on.
 */
export async function* recoverTurn(runtime: SessionRuntime, control: TurnRunControl, driver: RecoveryDriver): TurnRunStream {
  return yield* recover(runtime, control, driver)
}

/** Who recovers the turn, and how. */
interface RecoveryDriver {
  host: string
  fence: number | null
  wakeups: WakeupPolicy
  /** A worker's resume: a child agent's turn that a crash cut is its parent's to decide. */
  deferToParent: boolean
}

/** The recovery: how its run ended when it does not chat, else the chat turn's chunks and end. */
async function* recover(
  runtime: SessionRuntime,
  control: TurnRunControl,
  driver: RecoveryDriver,
): AsyncGenerator<StreamChunk, TurnRunEnd | undefined> {
  const { state, writer, clock } = runtime
  const open = state.openTurn
  if (!open) return undefined
  const cancelled = cutCancel(runtime)
  if (cancelled !== undefined) {
    // A cancel that a crash cut in its rollback: it goes on where it stopped, and the turn ends cancelled (no model call, no wait).
    await rollBackOnCancel(runtime, (name) => runtime.harness.toolNamed(name), cancelled, open.turnId)
    await endTurnCancelled(runtime, open.turnId, cancelled)
    return { outcome: { kind: 'finished' }, tail: [] }
  }
  if (driver.deferToParent && state.parent && !(await parentWaits(runtime, state.parent))) {
    // Its parent's call ended without it (the parent's turn was cancelled while the call was
    // still starting this child elsewhere): nobody waits for its answer, and deferring to the
    // parent would leave it open for ever. It ends here, and never runs again.
    await endTurnCancelled(runtime, open.turnId, ORPHAN_REASON)
    return { outcome: { kind: 'stopped' }, tail: [] }
  }
  if (await driver.wakeups.stillWaiting()) return { outcome: { kind: 'parked', parked: parkedCall(state)! }, tail: [] }
  if (driver.deferToParent && state.parent && !parkedCall(state)) {
    // Its parent never parked on it, so the parent call decides from the log whether it
    // goes on (it waits for a person) or was cut (it never runs again): wake the parent.
    await driver.wakeups.deferToParent()
    return { outcome: { kind: 'stopped' }, tail: [] }
  }
  await writer.append([{ type: 'harness.turn.resumed', turnId: open.turnId, at: clock.now(), host: driver.host, fence: driver.fence }])
  await settleCutCalls(runtime)
  return yield* chatTurn(runtime, open.turnId, control)
}

/** Whether the parent's open turn still waits for the agent call that runs this child (read from the store). */
async function parentWaits(runtime: SessionRuntime, parent: { sessionId: string; toolCallId: string }): Promise<boolean> {
  const state = await readAndFold(runtime.store, parent.sessionId)
  return state.openTurn?.callIds.includes(parent.toolCallId) === true && !state.calls.get(parent.toolCallId)?.result
}

/**
 * Ends the open turn cancelled, with `reason`: a child whose parent no longer waits for it,
 * or a cancel a crash cut. Its own agent children first (deepest first, as a cancel does),
 * so a crash halfway leaves the rest open.
 */
async function endTurnCancelled(runtime: SessionRuntime, turnId: string, reason: string): Promise<void> {
  const { store, writer, clock } = runtime
  await markChildCancel(runtime, store, reason, turnId)
  await cancelChildren(runtime, store)
  await writer.append([{ type: 'harness.turn.cancelled', turnId, at: clock.now(), reason }])
}

/**
 * Settles the calls a crash cut, by the replay rules; parked calls and calls that never
 * started are not cut. Called right after this host's `harness.turn.resumed` is logged.
 *
 * A batch with a call that waits for approval runs no call before every approval of it is
 * decided and a host took the turn over to act on that: until then none of its calls is cut
 * (they wait). After that, a denied call is not cut either (it never runs: the harness logs
 * the denial), and the other calls follow the rules above, like any call.
 */
export async function settleCutCalls(runtime: SessionRuntime): Promise<void> {
  const { state, harness, writer } = runtime
  const settle: ToolResultRecord[] = []
  for (const call of unsettledCalls(state)) {
    if (!cutAtResume(state, call.id)) continue
    if (harness.replayOfCall(call) === 'safe') continue
    // An agent call is decided from its child's log when the turn runs again (see runAgentCall).
    if (agentMetaOf(harness.toolNamed(call.name))) continue
    settle.push({
      type: 'harness.tool.result',
      toolCallId: call.id,
      toolName: call.name,
      ok: false,
      result: { error: runtime.scanner.redactText(harness.cutToolError) },
      cut: true,
    })
  }
  if (settle.length > 0) await writer.append(settle)
}
