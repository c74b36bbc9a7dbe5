import type { AnyTool } from '@tanstack/ai'
import type { LogRecord } from '../contract/types.js'
import type { StopReason } from './run-stop.js'
import type { SessionRuntime } from './session-runtime.js'
import { ATTR, type HarnessSpan } from './tracing.js'

/**
 * The approval of a call of a tool with `needsApproval`, in the log: the gate a call
 * passes before it runs, and the result of a denied call.
 */

/** What a denied call needs of the chat loop: stopping the run when its write fails. */
export interface StopsRun {
  stop(error: unknown): void
}

/** The gate's answer: the call's decision, or the stop of the run (a park until a person decides, a failed write). */
export type ApprovalGateResult =
  | { readonly stopped: false; readonly approved: boolean }
  | { readonly stopped: true; readonly reason: StopReason }

/** The result TanStack AI gives the model for a denied call (its `deniedApprovalResult`): `{ error }` with this text. */
export const DENIED_TOOL_ERROR = 'User declined tool execution'

/**
 * The approval of a call of a tool with `needsApproval`: approved or denied, or, for a
 * call without a decision, a park of the run: its request is logged first (if the batch's
 * assistant record did not carry it), so any host can decide it. A failed write of the
 * request is the session's own failure.
 */
export async function approvalGate(
  session: SessionRuntime,
  tool: AnyTool,
  toolCallId: string,
  span: HarnessSpan,
): Promise<ApprovalGateResult> {
  const approval = session.state.calls.get(toolCallId)?.approval
  if (approval?.decision) return { stopped: false, approved: approval.decision.approved }
  if (!approval) {
    const request: LogRecord = { type: 'harness.approval.requested', toolCallId, toolName: tool.name, at: session.clock.now() }
    try {
      await session.writer.append([request])
    } catch (error) {
      return { stopped: true, reason: { kind: 'failure', error } }
    }
  }
  span.set({ [ATTR.outcome]: 'parked' })
  return { stopped: true, reason: { kind: 'park', park: { toolCallId, reason: 'approval', until: null, event: { toolCallId } } } }
}

/** A denied call: the tool does not run; the model gets TanStack AI's denial result, as chat() gives it. */
export async function settleDenied(
  session: SessionRuntime,
  tool: AnyTool,
  control: StopsRun,
  toolCallId: string,
  span: HarnessSpan,
): Promise<never> {
  span.set({ [ATTR.outcome]: 'denied' })
  const seen = { error: DENIED_TOOL_ERROR }
  try {
    await session.writer.append([{ type: 'harness.tool.result', toolCallId, toolName: tool.name, ok: false, result: seen, cut: false }])
  } catch (caught) {
    control.stop(caught)
    throw caught
  }
  throw new Error(DENIED_TOOL_ERROR)
}
