import type { ToolExecutionContext } from '@tanstack/ai'
import { checkRecords, type RecordRules } from '../contract/record-checks.js'
import type { LogRecord } from '../contract/types.js'
import { jsonBytes, jsonCopy } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { CallLog, logValue } from './call-log.js'
import { askStep, sleepStep } from './call-waits.js'
import { type AppendRecords, type DurableToolContext, SESSION_CONTEXT, type Step, type StepRunContext } from './durable-tool.js'
import { isHarnessRecordType, type ToolResultRecord } from './records.js'
import { RecordError, toolTimedOut } from './runtime-errors.js'
import { CallStop, type ParkReason, type StopReason } from './run-stop.js'
import type { SessionRuntime } from './session-runtime.js'
import { SECRET_USED_RECORD } from '../secrets/session-secrets.js'
import { scrubbed } from '../secrets/step-checks.js'
import { callSteps, runStep } from './step-engine.js'
import { StepGuard } from './step-outcome.js'
import type { StepDoOptions } from './step-outcome-options.js'
import type { StepOptions } from './step-retry.js'
import { type Deadline, deadline } from './timers.js'
import type { OtelContext } from './tracing.js'

/** How a tool call reaches the chat loop it runs in. */
export interface ChatLoopControl {
  /** Stops the chat loop, and so the turn's run, for the session's own failure. The first reason wins. */
  stop(error: unknown): void
  /** Stops the chat loop for a park or own failure one of its calls met. The first reason wins. */
  stopFor(reason: StopReason): void
  /** True once the chat loop stopped (a park, a failure, cancel, hand-off, close). */
  readonly stopped: boolean
  /** True once the chat loop stopped because a call parked (on purpose: no failure). */
  readonly parked: boolean
  /** The context of the turn run's span: tool call spans are its children. */
  readonly trace?: OtelContext
}

/**
 * One tool call this host runs in a durable session: its steps, its buffered app records, and the
 * append that settles it. The result record and the app records land in one append,
 * so a call cut before its result never wrote its records. Its steps run on the step
 * engine (`runStep`) with the session log as their journal (`CallLog`).
 *
 * A call lives while its `execute` runs. A step call after that (a promise left
 * running) throws `TOOL_CALL_SETTLED`, runs nothing and writes nothing. Every write and
 * every park of the call is noted on the call's stop authority (`callStop`): a failure of
 * either, or a park, stops the run, and the step that met it stays pending in the tool
 * (see `CallStop.race`).
 */
export class LiveToolCall {
  readonly #records: LogRecord[] = []
  /** The call's time limit (the tool's `timeoutMs`), over the turn run's signal. */
  readonly deadline: Deadline
  /** The session log as the journal of the call's steps. */
  readonly log: CallLog
  /** How the run stops a step: the call's signal, and the session's own failures. */
  readonly #stepStop: { signal: AbortSignal; isStop(error: unknown): boolean }
  /** The call's stop authority: the first park or own failure its steps, waits and writes met. */
  readonly callStop = new CallStop()

  constructor(
    readonly session: SessionRuntime,
    /** The call's id in the session log (see `LoggedToolCall.id`). */
    readonly toolCallId: string,
    readonly toolName: string,
    signal: AbortSignal | undefined,
    tool: { retry?: StepOptions; timeoutMs?: number } = {},
    /** The context of the call's span: step spans are its children. */
    trace?: OtelContext,
  ) {
    const turnRunSignal = signal ?? new AbortController().signal
    this.deadline = deadline(turnRunSignal, tool.timeoutMs, () => toolTimedOut(toolName, tool.timeoutMs!))
    this.log = new CallLog(
      session,
      this.callStop,
      toolCallId,
      toolName,
      turnRunSignal,
      this.deadline.signal,
      trace,
      () => this.deadline.expired,
      tool.retry,
    )
    // Whatever a step meets after the call's stop is the stop, not a failure of the step.
    this.#stepStop = { signal: this.deadline.signal, isStop: () => this.callStop.reason !== undefined }
    this.step = callSteps({
      journal: this.log,
      stop: this.#stepStop,
      // Seam (step-outcome.ts): verify, once, undo, and the steps of a call that rolls back.
      guarded: (name, options, fn) => this.outcomes.do(name, options as StepDoOptions | undefined, fn),
      sleep: (name, ms) => sleepStep(this, name, ms),
      ask: (options) => askStep(this, options),
      // The call met its stop (noted where it happened): the step stays pending while the harness ends the call.
      failed: (error) => (this.callStop.reason === undefined ? Promise.reject(error) : this.callStop.pending(error)),
    }) as Step
  }

  /** The tool's abort signal: aborted when the run stops or the call passes its time limit. */
  get signal(): AbortSignal {
    return this.deadline.signal
  }

  get idPrefix(): string {
    return this.log.idPrefix
  }

  /** The call's execute settled (or its time ran out): later step calls are refused. */
  end(): void {
    this.log.end()
    this.deadline.clear()
  }

  /** Parks the call: the run stops on purpose, the call stays open, and the parked step does not settle. */
  park(reason: ParkReason, until: number | null, event: Record<string, unknown>): Promise<never> {
    return this.callStop.park({ toolCallId: this.toolCallId, reason, until, event })
  }

  /** A plain step of the call past `step.do`'s first checks (a guarded step's own steps): the step engine on the session log. */
  #doStep(name: string, options: StepDoOptions | undefined, fn: (context: StepRunContext) => unknown): Promise<unknown> {
    return runStep(this.log, name, this.log.prepare(name, options), fn, this.#stepStop)
  }

  #guard: StepGuard | undefined

  /**
   * Seam (step-outcome.ts, compensation.ts): the guard of the call's steps with `verify`,
   * `once` or `undo`, and of its rollback; made on first use, so a call without them has none.
   * It calls back into the plain step (`#doStep`) and the call's writes.
   */
  get outcomes(): StepGuard {
    this.#guard ??= new StepGuard({
      session: this.session,
      toolCallId: this.toolCallId,
      idPrefix: this.idPrefix,
      signal: this.signal,
      stopped: () => this.callStop.reason !== undefined,
      doStep: (name, options, fn) => this.#doStep(name, options, fn),
      logValue: async (name, value) => {
        const headBytes = jsonBytes({ type: 'harness.step', toolCallId: this.toolCallId, name })
        return (await logValue(this.log, name, value, headBytes, this.session.writer)).value
      },
      claimName: (name) => this.claimName(name),
      write: (records) => this.log.write('step.do', records),
      ask: (options) => this.step.ask(options as never),
    })
    return this.#guard
  }

  /** Claims a step, sleep or question name in the call (a second use throws `STEP_DUPLICATE_NAME`). */
  claimName(name: string): void {
    this.log.claimName(name)
  }

  /** The step API the tool gets (see `callSteps`): the run's stop (a park, an own failure) never reaches the tool. */
  readonly step: Step

  readonly append: AppendRecords = (records) => {
    this.log.assertLive('append')
    this.#records.push(...checkedAppRecords(this.session, records))
  }

  readonly secret = (name: string): Promise<string> => readSecret(this.session, name)

  contextFor(context: ToolExecutionContext | undefined): DurableToolContext {
    const durable: DurableToolContext & { [SESSION_CONTEXT]: true } = {
      ...(context as ToolExecutionContext),
      [SESSION_CONTEXT]: true,
      abortSignal: this.signal,
      emitCustomEvent: context?.emitCustomEvent ?? (() => {}),
      step: this.step,
      // A refusal names the record's type and path, which may hold a secret.
      append: (records) => scrubbed(this.session.scanner, () => this.append(records)),
      secret: this.secret,
    }
    return durable
  }

  /** Records the outcome with the buffered app records, in one append. */
  async settle(ok: boolean, result: JsonValue, cut = false): Promise<void> {
    const record: ToolResultRecord = {
      type: 'harness.tool.result',
      toolCallId: this.toolCallId,
      toolName: this.toolName,
      ok,
      result,
      cut,
    }
    await this.session.writer.append([record, ...this.#records])
  }

  /** Records the outcome without the app records (they were part of what did not fit). */
  async settleAlone(ok: boolean, result: JsonValue): Promise<void> {
    this.#records.length = 0
    await this.settle(ok, result)
  }
}

/** A tool's words for the record checks of `append`; `harness.` types are the runtime's own. */
const TOOL_RECORD_RULES: RecordRules = {
  notArray: 'append takes an array of records: append([{ type: "app.note", ... }]).',
  example: '{ type: "app.memory", ... }',
  nonEmptyType: true,
  type(type, at) {
    if (isHarnessRecordType(type)) {
      throw new RecordError(
        'RECORD_TYPE_RESERVED',
        `${at} has type ${JSON.stringify(type)}; types beginning "harness." are reserved. Use your app's own prefix, e.g. "app.${type.slice('harness.'.length)}".`,
        at,
      )
    }
  },
  error: (code, message, path) => new RecordError(code, message, path),
}

/** App records as the call keeps them: checked (no `harness.` type, no secret of the session) and copied. */
function checkedAppRecords(session: SessionRuntime, records: readonly LogRecord[]): LogRecord[] {
  const checked: LogRecord[] = []
  checkRecords(records, TOOL_RECORD_RULES, (record, at) => {
    const secret = session.scanner.find(record, at)
    if (secret) {
      throw new RecordError(
        'RECORD_SECRET',
        `${secret.path} holds a secret of the session (${secret.encoding}). The log must not keep it: log an id, not the token.`,
        secret.path,
      )
    }
    checked.push(jsonCopy(record))
  })
  return checked
}

/**
 * Reads a secret by name and makes it one of the session's secrets. The first read of
 * a name logs the name (never the value) before the tool gets it, so whoever opens the
 * session later resolves it again and keeps it out of the log too.
 */
async function readSecret(session: SessionRuntime, name: string): Promise<string> {
  const { sessionSecrets, writer } = session
  const { value, firstUse } = await sessionSecrets.read(name)
  if (firstUse) {
    await writer.append([{ type: SECRET_USED_RECORD, name }])
    sessionSecrets.markUsed(name)
  }
  return value
}
