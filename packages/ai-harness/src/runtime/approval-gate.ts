import type { AnyTool } from '@tanstack/ai'
import type { LogRecord } from '../contract/types.js'
import { asOwn, own } from './own-failures.js'
import { ParkSignal } from './park.js'
import type { SessionRuntime } from './session-runtime.js'
import { ATTR, type HarnessSpan } from './tracing.js'

/**
 * The approval of a call of a tool with `needsApproval`, in the log: the gate a call
 * passes before it runs, and the result of a denied call.
 */

/** What the gate needs of the chat loop: stopping the run (a park, or a failed write). */
export interface StopsRun {
  stop(reason: object): void
}

/** The result TanStack AI gives the model for a denied call (its `deniedApprovalResult`): `{ error }` with this text. */
export const DENIED_TOOL_ERROR = 'User declined tool execution'

/**
 * The approval of a call of a tool with `needsApproval`: true when it was approved, false
 * when it was denied. A call without a decision parks the run: its request is logged first
 * (if the batch's assistant record did not carry it), so any host can decide it.
 */
export async function approvalGate(
  session: SessionRuntime,
  tool: AnyTool,
  control: StopsRun,
  toolCallId: string,
  span: HarnessSpan,
): Promise<boolean> {
  const approval = session.state.calls.get(toolCallId)?.approval
  if (approval?.decision) return approval.decision.approved
  try {
    if (!approval) {
      const request: LogRecord = { type: 'harness.approval.requested', toolCallId, toolName: tool.name, at: session.clock.now() }
      await asOwn(session, () => session.writer.append([request]))
    }
  } catch (caught) {
    control.stop(own(session, caught))
    throw caught
  }
  span.set({ [ATTR.outcome]: 'parked' })
  const signal = own(session, new ParkSignal(toolCallId, 'approval', null, { toolCallId })) as ParkSignal
  control.stop(signal)
  throw signal
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
    control.stop(own(session, caught))
    throw caught
  }
  throw new Error(DENIED_TOOL_ERROR)
}
