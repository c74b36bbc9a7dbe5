import type { AnyTool } from '@tanstack/ai'
import { durableMetaOf } from './durable-tool.js'
import { callInput, unsettledCalls } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import { LiveToolCall } from './tool-call.js'

/**
 * When a session's open turn is cancelled, the durable calls of its last batch that have
 * finished steps run their compensations (`undo`), newest first, and settle as a tool
 * error that says what was undone. Each call's `execute` runs again only to find them: its
 * finished steps return their logged values, and the first step, sleep or question it had
 * not finished throws. A call with nothing to undo writes nothing, as before.
 *
 * Each rollback record a cancel logs names the cancel (its turn and reason), so a run after
 * a crash in the middle finishes the cancel (`cutCancel`) instead of running the turn on.
 */
export async function rollBackOnCancel(
  runtime: SessionRuntime,
  toolNamed: (name: string) => AnyTool | undefined,
  reason: string,
  turnId: string,
): Promise<void> {
  for (const logged of unsettledCalls(runtime.state)) {
    const meta = durableMetaOf(toolNamed(logged.name))
    if (!meta || !runtime.state.steps.get(logged.id)?.size) continue
    const call = new LiveToolCall(runtime, logged.id, logged.name, undefined, meta)
    try {
      const rolled = await call.outcomes.compensations.rollBackOnCancel(
        async () => meta.execute(callInput(logged.arguments), call.contextFor(undefined)),
        new Error(`The session was cancelled: ${reason}`),
        { turnId, reason },
      )
      if (rolled) await call.settle(false, { error: runtime.scanner.redactText(rolled.message) })
    } finally {
      call.end()
    }
  }
}

/**
 * The reason of a cancel of the open turn that a crash cut after its first rollback record
 * (the turn is still open), or undefined. A run that takes the turn over finishes that
 * cancel: the rest of the rollback, then the turn ends cancelled, without a model call.
 */
export function cutCancel(runtime: SessionRuntime): string | undefined {
  const { cancelling } = runtime.state.outcomes
  return cancelling && runtime.state.openTurn?.turnId === cancelling.turnId ? cancelling.reason : undefined
}
