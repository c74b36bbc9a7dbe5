import type { AnyTool, ToolExecutionContext } from '@tanstack/ai'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import { jsonCopy } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { AgentCallCut } from './agent-child.js'
import { runAgentCall } from './agent-call.js'
import { agentMetaOf } from './agent-tool.js'
import { approvalGate, settleDenied } from './approval-gate.js'
import { durableMetaOf, isSessionContext } from './durable-tool.js'
import { type StopReason, stopError } from './run-stop.js'
import type { SessionRuntime } from './session-runtime.js'
import { type ChatLoopControl, LiveToolCall } from './tool-call.js'
import { ATTR, type HarnessSpan, startSpan } from './tracing.js'

/**
 * A tool bound to a durable session (`wrapTool`), as the chat loop gives it to `chat()`:
 * a call answered from the log, or run (its approval first), its hooks applied, and
 * settled in the log with what the model sees.
 */

/** The value `chat()` makes of a tool's return value, so the log keeps what the model saw. */
function modelValue(value: unknown): JsonValue {
  if (typeof value === 'string') {
    try {
      return JSON.parse(value) as JsonValue
    } catch {
      return value
    }
  }
  return jsonCopy(value ?? null) as JsonValue
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : typeof error === 'string' ? error : 'Unknown error'
}

/**
 * Wraps a tool so that, in a durable session, its call is settled in the log: steps
 * memoized, app records buffered, hooks applied, secrets removed, and the result the
 * model sees appended before `chat()` gets it. Whatever the tool throws is a tool error
 * for the model, except where the call met the run's stop (a park, the session's own
 * failure, noted on the call's stop authority): then the run stops, and the call stays open.
 */
export function wrapTool(session: SessionRuntime, tool: AnyTool, control: ChatLoopControl): AnyTool {
  const meta = durableMetaOf(tool)
  const agent = agentMetaOf(tool)
  const original = tool.execute
  if (!original && !meta && !agent) return tool
  return {
    ...tool,
    // The session keeps the approval in its log (see `approvalGate`): chat() must not wait for one itself,
    // since it would end the run without a result the log can hold.
    needsApproval: false,
    execute: async (args: unknown, context?: ToolExecutionContext) => {
      // A middleware wrapped this bound tool, and chat() got the wrapper bound again: the
      // outer binding runs the call; this one only passes it on, as the tool would be called.
      if (isSessionContext(context)) return original ? original(args, context) : meta?.execute(args, context)
      const toolCallId = context?.toolCallId
      if (!toolCallId) throw new HarnessError('INVALID_ARGUMENT', 'A durable session needs tool call ids from the adapter.')
      // A stopped run starts no more calls: they stay open, and run when the session resumes.
      if (control.stopped) throw new Error('The run stopped before this tool call started; it runs when the session resumes.')
      const span = await startSpan(
        'harness.tool.call',
        {
          [ATTR.sessionId]: session.sessionId,
          [ATTR.toolCallId]: toolCallId,
          [ATTR.toolName]: tool.name,
          [ATTR.hostId]: session.state.openTurn?.host,
          [ATTR.turnId]: session.state.openTurn?.turnId,
        },
        { parent: control.trace, scanner: session.scanner },
      )
      try {
        const ran = await span.run(() => runCall(session, tool, control, { args, context, toolCallId, span }))
        if (!ran.stopped) return ran.value
        // The run stopped (the chat loop ends without a result for this call): chat() gets an error to pass on.
        throw stopError(ran.reason)
      } catch (error) {
        // A park is no error: a sleep, a question or a retry wait must not fire error-rate alerts.
        if (!control.parked) span.fail(error)
        throw error
      } finally {
        span.end()
      }
    },
  } as AnyTool
}

/** One call of a bound tool: answer from the log, or run it, apply the hooks, and settle it in the log. */
async function runCall(
  session: SessionRuntime,
  tool: AnyTool,
  control: ChatLoopControl,
  { args, context, toolCallId, span }: { args: unknown; context: ToolExecutionContext | undefined; toolCallId: string; span: HarnessSpan },
): Promise<Ran> {
  const logged = session.state.results.get(toolCallId)
  if (logged) {
    span.set({ [ATTR.outcome]: 'logged' })
    if (logged.ok) return { stopped: false, value: logged.result }
    throw new Error(errorMessage((logged.result as { error?: unknown })?.error))
  }
  if (tool.needsApproval) {
    const approval = await approvalGate(session, tool, toolCallId, span)
    if (approval.stopped) {
      control.stopFor(approval.reason)
      return approval
    }
    if (!approval.approved) return settleDenied(session, tool, control, toolCallId, span)
  }
  try {
    // An approved call, like any call, starts only while no other host can have taken the session over.
    await session.leaseFresh()
  } catch (caught) {
    control.stop(caught)
    throw caught
  }
  const call = new LiveToolCall(session, toolCallId, tool.name, context?.abortSignal, durableMetaOf(tool), span.context)
  const executed = await executeCall(tool, control, call, { args, context, span })
  if ('stopped' in executed) return executed
  const outcome = await applyHooks(session, tool, { toolCallId, args }, executed)
  const settled = await settleCall(session, tool, control, call, outcome)
  span.set({ [ATTR.outcome]: settled.ok ? 'ok' : call.deadline.expired ? 'timed-out' : 'error' })
  if (!settled.ok) throw new Error((settled.seen as { error: string }).error)
  return { stopped: false, value: settled.seen }
}

/** How a bound call ended: the value chat() gets, or the stop of the run it met (its result is not logged). */
type Ran = { readonly stopped: false; readonly value: unknown } | { readonly stopped: true; readonly reason: StopReason }

/** How a call ended before it is settled: its value, or the error the model will see. */
interface CallOutcome {
  ok: boolean
  value?: unknown
  error?: unknown
}

/**
 * Runs the tool (an agent's child session, a durable tool with its steps, or a plain
 * tool) against the call's stop. Whatever it throws is the call's error; a park or the
 * session's own failure (which the tool never sees) stops the run.
 */
async function executeCall(
  tool: AnyTool,
  control: ChatLoopControl,
  call: LiveToolCall,
  { args, context, span }: { args: unknown; context: ToolExecutionContext | undefined; span: HarnessSpan },
): Promise<CallOutcome | { readonly stopped: true; readonly reason: StopReason }> {
  const meta = durableMetaOf(tool)
  const agent = agentMetaOf(tool)
  try {
    // A durable tool runs through the tool's own execute, as chat() would call it: a
    // middleware's wrapper of it (permissions, metering) runs in a session too, and the
    // durable execute under it finds the session's context (see `isSessionContext`).
    // The call's execute races the call's stop: a step that parks or meets the session's own
    // failure stays pending in the tool, and the call ends here (see `CallStop.race`).
    const raced = await call.callStop.race(() =>
      agent
        ? runAgentCall(call, agent, args, context)
        : meta
          ? call.deadline.race(
              // Seam (compensation.ts): a call that fails rolls back its finished steps' undo; a stop or its deadline does not.
              call.outcomes.compensations.runCall(
                () => Promise.resolve((tool.execute ?? meta.execute)(args, call.contextFor(context))),
                () => control.stopped || call.callStop.reason !== undefined || call.deadline.expired,
              ),
            )
          : Promise.resolve(tool.execute!(args, call.contextFor(context))),
    )
    if (!raced.stopped) return { ok: true, value: raced.value }
    // A park or a stop first lets the call's steps in flight (the siblings in a Promise.all) log
    // how they ended: a value that is not logged would make the resumed call run its fn again.
    await call.log.drain()
    span.set({ [ATTR.outcome]: raced.reason.kind === 'park' ? 'parked' : 'stopped' })
    control.stopFor(raced.reason)
    return raced
  } catch (caught) {
    if (control.stopped) await call.log.drain()
    return { ok: false, error: caught }
  } finally {
    call.end()
  }
}

/** The harness's `replaceToolResult` hooks (then the deprecated `onAfterToolCall` ones), in order: each may replace the result, also an error's. */
async function applyHooks(
  session: SessionRuntime,
  tool: AnyTool,
  { toolCallId, args }: { toolCallId: string; args: unknown },
  outcome: CallOutcome,
): Promise<CallOutcome> {
  let { ok, value, error } = outcome
  for (const hook of session.harness.hooks) {
    try {
      const replaced = await hook({ toolName: tool.name, toolCallId, args, ok, result: value, error })
      if (replaced && typeof replaced === 'object' && 'result' in replaced) {
        ok = true
        value = replaced.result
        error = undefined
      }
    } catch (hookError) {
      // A failing hook fails the call, as the model will see it; it must still be settled in the log.
      ok = false
      value = undefined
      error = hookError
    }
  }
  return { ok, value, error }
}

/** What the model sees of an outcome: the value as JSON, or `{ error }`, without the session's secrets. */
function modelResult(session: SessionRuntime, { ok, value, error }: CallOutcome): { ok: boolean; seen: JsonValue } {
  if (!ok) return { ok, seen: { error: session.scanner.redactText(errorMessage(error)) } }
  try {
    return { ok, seen: session.scanner.redact(modelValue(value)) }
  } catch (caught) {
    return {
      ok: false,
      seen: { error: session.scanner.redactText(`The tool returned a value that cannot be sent as JSON: ${errorMessage(caught)}`) },
    }
  }
}

/**
 * Settles the call in the log with what the model sees. A result (or its records) over
 * the store's limits must not stop the turn: the model gets a tool error it can act on,
 * and the log keeps that error alone.
 */
async function settleCall(
  session: SessionRuntime,
  tool: AnyTool,
  control: ChatLoopControl,
  call: LiveToolCall,
  outcome: CallOutcome,
): Promise<{ ok: boolean; seen: JsonValue }> {
  const result = modelResult(session, outcome)
  try {
    // An agent call whose child was cut is settled as cut, as the replay rules settle other cut calls.
    await call.settle(result.ok, result.seen, !result.ok && outcome.error instanceof AgentCallCut)
    return result
  } catch (caught) {
    if (!isHarnessError(caught, 'RECORD_TOO_LARGE')) {
      control.stop(caught)
      throw caught
    }
    const seen = {
      error: session.scanner.redactText(
        `The result of ${tool.name} is too large to keep in the session log (${caught.message}) Return an id or a summary instead.`,
      ),
    }
    try {
      await call.settleAlone(false, seen)
    } catch (again) {
      control.stop(again)
      throw again
    }
    return { ok: false, seen }
  }
}
