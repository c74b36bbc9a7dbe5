import { type AnyTool, convertSchemaToJsonSchema, type ToolExecutionContext, validateWithStandardSchema } from '@tanstack/ai'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import { isWellFormedText } from '../contract/prepare-batch.js'
import { checkRecords, type RecordRules } from '../contract/record-checks.js'
import type { LogRecord } from '../contract/types.js'
import { jsonBytes, jsonCopy, utf8Length } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { AgentCallCut } from './agent-child.js'
import { runAgentCall } from './agent-call.js'
import { agentMetaOf } from './agent-tool.js'
import { approvalGate, settleDenied } from './approval-gate.js'
import {
  type AppendRecords,
  assertSleepMs,
  assertStepJson,
  assertStepName,
  claimStepName,
  type DurableToolContext,
  durableMetaOf,
  isSessionContext,
  SESSION_CONTEXT,
  type Step,
  type StepRunContext,
  stepDoArguments,
} from './durable-tool.js'
import { asOwn, own, ownFailureIn } from './own-failures.js'
import { isParkSignal, ParkSignal } from './park.js'
import {
  type AnswerRejectedRecord,
  isHarnessRecordType,
  type StepFailedRecord,
  type StepStartedRecord,
  type ToolResultRecord,
} from './records.js'
import { RecordError, StepError, StepFailedError, toolCallSettled, toolTimedOut } from './runtime-errors.js'
import {
  failureText,
  isFinalFailure,
  LATEST_WAKE_MS,
  retryAt,
  runAttempt,
  shortFailureText,
  type StepOptions,
  type StepPolicy,
  stepPolicy,
} from './step-retry.js'
import { type Deadline, deadline, waitFor } from './timers.js'
import { assertNotRollingBack, guardApplies, StepGuard } from './step-outcome.js'
import type { StepDoOptions } from './step-outcome-options.js'
import { ATTR, type Attributes, type HarnessSpan, type OtelContext, startSpan } from './tracing.js'
import { questionId } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import { scrubError } from '../secrets/error-scrub.js'
import type { SessionWriter } from './session-writer.js'
import { SECRET_USED_RECORD } from '../secrets/session-secrets.js'
import { loggedQuestionSchema, refuseSecretName } from '../secrets/step-checks.js'

/** How a failed attempt ended: what `fn` threw, and whether another attempt follows. */
interface FailedAttempt {
  readonly error: unknown
  readonly timedOut: boolean
  readonly final: boolean
  readonly retryAt: number | undefined
}

/**
 * What `step.do` throws after its last attempt in the run where it happened: what `fn`
 * threw, so the tool can tell its own errors apart; a timed-out attempt has no error of
 * `fn`, so that is a `StepFailedError` saying it timed out. A later run (after a crash)
 * has only the log, and throws `StepFailedError` with the logged message.
 */
function lastAttemptError(name: string, attempt: number, failed: FailedAttempt): unknown {
  return failed.timedOut ? new StepFailedError(name, attempt, failureText(failed.error), true) : failed.error
}

/** How a tool call reaches the chat loop it runs in. */
export interface ChatLoopControl {
  /** Stops the chat loop, and so the turn's run: the session's own failure, or a park signal. The first one wins. */
  stop(reason: object): void
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
 * so a call cut before its result never wrote its records.
 *
 * A call lives while its `execute` runs. A step call after that (a promise left
 * running) throws `TOOL_CALL_SETTLED`, runs nothing and writes nothing. Every write and
 * every park signal of the call is the session's own: a failure of either stops the run,
 * whatever the tool does with it.
 */
export class LiveToolCall {
  readonly #usedNames = new Set<string>()
  readonly #records: LogRecord[] = []
  #ended = false
  /** The call is parking: attempts in flight finish and log, and no new attempt starts. */
  #draining = false
  /** The step attempts running now (their fn, then the record of how it ended). */
  readonly #inFlight = new Set<Promise<unknown>>()
  /** The turn run's abort signal: aborted when the session stops the run. */
  readonly #turnRunSignal: AbortSignal
  /** The call's time limit (the tool's `timeoutMs`), over the turn run's signal. */
  readonly deadline: Deadline
  /** The step options of the call's tool (`durableTool({ retry })`). */
  readonly #retry: StepOptions | undefined

  constructor(
    readonly session: SessionRuntime,
    /** The call's id in the session log (see `LoggedToolCall.id`). */
    readonly toolCallId: string,
    readonly toolName: string,
    signal: AbortSignal | undefined,
    tool: { retry?: StepOptions; timeoutMs?: number } = {},
    /** The context of the call's span: step spans are its children. */
    readonly trace?: OtelContext,
  ) {
    this.#turnRunSignal = signal ?? new AbortController().signal
    this.#retry = tool.retry
    this.deadline = deadline(this.#turnRunSignal, tool.timeoutMs, () => toolTimedOut(toolName, tool.timeoutMs!))
  }

  /** The tool's abort signal: aborted when the run stops or the call passes its time limit. */
  get signal(): AbortSignal {
    return this.deadline.signal
  }

  get idPrefix(): string {
    return `${this.session.sessionId}:${this.toolCallId}:`
  }

  /** The call's execute settled (or its time ran out): later step calls are refused. */
  end(): void {
    this.#ended = true
    this.deadline.clear()
  }

  #assertLive(what: string): void {
    if (this.#ended) throw toolCallSettled(what, this.toolCallId, this.toolName)
  }

  /**
   * Before the call parks: waits for the step attempts in flight (a sibling in a
   * `Promise.all` of the step that parked) to finish and log how they ended, so a later
   * run replays their values instead of running their fns again. No new attempt starts.
   */
  async drain(): Promise<void> {
    this.#draining = true
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight])
  }

  /** Appends for this call while it lives (through `writer`, a step attempt's own scope); a failure of the write is the session's own. */
  #write(what: string, records: LogRecord[], owned = false, writer = this.session.writer): Promise<void> {
    this.#assertLive(what)
    return writer.append(records, { owned }).catch((error: unknown) => {
      throw own(this.session, error)
    })
  }

  /** A durable time: the store's clock when it has one, so wake times do not depend on this host's clock. */
  #durableNow(): Promise<number> {
    const { store, clock } = this.session
    return asOwn(this.session, () => (store.now ? store.now() : clock.now()))
  }

  /** A record of this call must fit the store before anything runs: a step's name, a sleep, a question. */
  #assertFits(what: string, name: string, record: LogRecord, limit: number, part: string): number {
    const bytes = jsonBytes(record)
    if (bytes > limit) {
      throw new StepError(
        'INVALID_ARGUMENT',
        name.slice(0, 64),
        `${what}(${JSON.stringify(name.slice(0, 64))}…) makes a record of ${bytes} bytes before any value, over the limit of ${limit}; make the ${part} shorter. Nothing ran and nothing was written.`,
      )
    }
    return bytes
  }

  /** A park signal of this call: the run stops on purpose, the call stays open. */
  park(reason: ParkSignal['reason'], until: number | null, event: Record<string, unknown>): ParkSignal {
    return own(this.session, new ParkSignal(this.toolCallId, reason, until, event)) as ParkSignal
  }

  /**
   * Waits until the logged time `until` (a sleep's wake time, a retry's due time): in the
   * process up to `parkAfterMs`, else the session parks and a worker resumes it then.
   * The time is in the log, so a run stopped while it waits goes on waiting when the
   * session resumes.
   */
  async #waitUntil(what: string, name: string, until: number, now: number): Promise<void> {
    const remaining = until - now
    if (remaining <= 0) return
    if (remaining > this.session.parkAfterMs) throw this.park('sleep', until, { name, wakeAt: until })
    await waitFor(remaining, this.signal, () =>
      // The call's own time limit ends only the call; a stopped run is the session's own.
      this.#turnRunSignal.aborted
        ? own(
            this.session,
            new HarnessError(
              'LEASE_LOST',
              `The run stopped (cancel, hand-off, close or a lost lease) while ${what}(${JSON.stringify(name)}) waited; this host writes nothing more to the call, and the wait goes on when the session resumes.`,
            ),
          )
        : this.signal.reason,
    )
    this.#assertLive(what)
  }

  /** The span of a step answered from the log (its value, or its final failure): fn does not run. */
  async #traceFromLog(name: string, attributes: Attributes): Promise<void> {
    const span = await this.#stepSpan(name, { ...attributes, [ATTR.replayed]: true })
    span.end()
  }

  #stepSpan(name: string, attributes: Attributes): HarnessSpan | Promise<HarnessSpan> {
    return startSpan(
      'harness.step',
      () => ({
        [ATTR.sessionId]: this.session.sessionId,
        [ATTR.toolCallId]: this.toolCallId,
        [ATTR.hostId]: this.session.state.openTurn?.host,
        [ATTR.stepName]: name,
        ...attributes,
      }),
      { parent: this.trace, scanner: this.session.scanner },
    )
  }

  /**
   * One attempt of a step, in a span of its own: runs `fn` (its spans nest under the
   * attempt's), then logs its value or its failure. A stop of the run is neither.
   */
  #attempt(
    name: string,
    fn: (context: StepRunContext) => unknown,
    context: { idempotencyKey: string; attempt: number },
    policy: StepPolicy,
    headBytes: number,
  ): Promise<{ value: unknown; failed?: undefined } | { failed: FailedAttempt }> {
    // A parking call starts nothing more: the attempt runs when the session resumes.
    if (this.#draining) return Promise.reject(own(this.session, toolCallSettled('step.do', this.toolCallId, this.toolName)))
    const running = this.#runAttempt(name, fn, context, policy, headBytes)
    this.#inFlight.add(running)
    const forget = () => this.#inFlight.delete(running)
    running.then(forget, forget)
    return running
  }

  async #runAttempt(
    name: string,
    fn: (context: StepRunContext) => unknown,
    context: { idempotencyKey: string; attempt: number },
    policy: StepPolicy,
    headBytes: number,
  ): Promise<{ value: unknown; failed?: undefined } | { failed: FailedAttempt }> {
    const span = await this.#stepSpan(name, { [ATTR.attempt]: context.attempt, [ATTR.replayed]: false })
    let scope: { writer: SessionWriter; release: () => void } | undefined
    try {
      // A step must not start a side effect it could never log.
      try {
        this.session.writer.assertWritable()
        scope = this.session.stepScope()
      } catch (error) {
        throw own(this.session, error)
      }
      const { writer } = scope
      // Nor one that another host may start too: by this host's clock its lease must be fresh.
      await asOwn(this.session, () => this.session.leaseFresh())
      // An attempt of a step with retries is logged before fn runs, so one cut by a crash still counts.
      if (policy.attempts > 1) await this.#logStart(name, context.attempt, writer)
      const outcome = await span.run(() => runAttempt(fn, context, this.signal, policy.timeoutMs))
      if (outcome.ok) {
        const logged = await this.#logValue(name, outcome.value, headBytes, writer)
        span.set({ [ATTR.outcome]: 'ran', [ATTR.bytes]: logged.bytes })
        return { value: logged.value }
      }
      const { error, timedOut } = outcome
      // The session stopping (or the call's time limit) is no failure of the step: it is not logged or retried.
      if (ownFailureIn(this.session, error) || this.signal.aborted) {
        span.set({ [ATTR.outcome]: 'stopped' })
        throw error
      }
      span.set({ [ATTR.outcome]: timedOut ? 'timed-out' : 'failed' })
      span.fail(error)
      // A step without retries logs nothing when fn throws (a later run calls fn again):
      // only attempts that a crash must not forget are logged.
      if (policy.attempts === 1) return { failed: { error, timedOut, final: true, retryAt: undefined } }
      const record = await this.#logFailure(name, policy, context.attempt, error, timedOut, writer)
      return {
        failed: { error, timedOut, final: record.final === true, retryAt: typeof record.retryAt === 'number' ? record.retryAt : undefined },
      }
    } catch (error) {
      span.fail(error)
      throw error
    } finally {
      scope?.release()
      span.end()
    }
  }

  /**
   * The attempt a step without a value goes on with, from the log: after its last logged
   * failure (once its retry is due), or after an attempt that began and never ended (cut by
   * a crash or a stop: it counts). A step out of attempts, or whose failure was final,
   * throws its `StepFailedError` without calling fn, on this run and every later one.
   */
  async #nextAttempt(name: string, policy: StepPolicy): Promise<number> {
    const { state } = this.session
    const failures = state.stepFailures.get(this.toolCallId)?.get(name)
    const failed = failures?.attempts ?? 0
    if (failures && (failures.last.final || failed >= policy.attempts)) {
      await this.#traceFromLog(name, { [ATTR.outcome]: 'failed', [ATTR.attempt]: failed })
      throw new StepFailedError(name, failed, failures.last.error, failures.last.timedOut)
    }
    const started = state.stepStarts.get(this.toolCallId)?.get(name) ?? 0
    if (started > failed) {
      if (started < policy.attempts) return started + 1
      // The budget ran out on a cut attempt (a fn that kills its host, say): the step fails for good.
      const record = await this.#logFailure(name, policy, started, new Error(CUT_ATTEMPT_ERROR), false)
      throw new StepFailedError(name, started, record.error, false)
    }
    if (typeof failures?.last.retryAt === 'number') await this.#waitUntil('step.do', name, failures.last.retryAt, await this.#durableNow())
    return failed + 1
  }

  /** Logs that attempt `attempt` of a step with retries begins (see `StepStartedRecord`). */
  async #logStart(name: string, attempt: number, writer: SessionWriter): Promise<void> {
    const record: StepStartedRecord = {
      type: 'harness.step.started',
      toolCallId: this.toolCallId,
      name,
      attempt,
      at: this.session.clock.now(),
    }
    await this.#write('step.do', [record], false, writer)
  }

  /** Checks a step's value and logs it; resolves with the JSON copy a later run gets too, and the record's size. */
  async #logValue(name: string, value: unknown, headBytes: number, writer: SessionWriter): Promise<{ value: unknown; bytes: number }> {
    // fn finished after the call ended (a dangling step): its value belongs to no call.
    this.#assertLive('step.do')
    // Its path can name a key that holds a secret.
    scrubbed(this.session, () => assertStepJson(name, value))
    refuseStepSecret(this.session, name, value)
    const record: LogRecord = { type: 'harness.step', toolCallId: this.toolCallId, name }
    // One JSON text of the value: the record's copy and the caller's copy are parsed from it,
    // and the record's size is counted from it (the record's JSON is its head, then `,"value":` and the text).
    const text = value === undefined ? undefined : JSON.stringify(value)
    let bytes = headBytes
    if (text !== undefined) {
      record.value = JSON.parse(text) as JsonValue
      bytes += VALUE_KEY_BYTES + utf8Length(text)
    }
    if (bytes > this.session.maxStepBytes) {
      throw new StepError(
        'STEP_TOO_LARGE',
        name,
        `Step ${JSON.stringify(name)} returned ${bytes} bytes of JSON, over the limit of ${this.session.maxStepBytes}. Keep step values small: store big data elsewhere and return its id.`,
      )
    }
    // The record is parsed from our own text and nobody else holds it: the fold keeps it without a copy.
    await this.#write('step.do', [record], true, writer)
    return { value: text === undefined ? undefined : JSON.parse(text), bytes }
  }

  /**
   * Logs a failed attempt (its error without the session's secrets), before any retry
   * waits: after a crash the attempts go on from the log. A failure that is not final
   * has `retryAt`, the next attempt's due time.
   */
  async #logFailure(
    name: string,
    policy: StepPolicy,
    attempt: number,
    error: unknown,
    timedOut: boolean,
    writer = this.session.writer,
  ): Promise<StepFailedRecord> {
    const final = isFinalFailure(policy, error, attempt)
    const at = await this.#durableNow()
    const record: StepFailedRecord = {
      type: 'harness.step.failed',
      toolCallId: this.toolCallId,
      name,
      attempt,
      // Redacted before it is cut: a secret across the cut would leave its first part in the log.
      error: shortFailureText(this.session.scanner.redactText(failureText(error))),
      timedOut,
      final,
      at,
    }
    if (!final) record.retryAt = retryAt(policy, attempt, at)
    // A long message must not make the record too large for the store: it is cut further.
    while (jsonBytes(record) > this.session.store.limits.maxRecordBytes && record.error.length > 16) {
      record.error = shortFailureText(record.error, Math.floor(record.error.length / 2))
    }
    await this.#write('step.do', [record], false, writer)
    return record
  }

  /** The first park signal or own failure a step function of this call threw, caught by the tool or not. */
  #stop: object | undefined

  /**
   * The park signal or own failure of the session that a step threw, if any. The run
   * stops on it even when the tool caught it (a `try` around a step that may fail, or
   * park for its retry) and returned or threw something else.
   */
  get stop(): object | undefined {
    return this.#stop
  }

  /** The plain `step.do`: the step's value from the log, or its attempts, each logging its value or failure. */
  async #doStep(name: string, options: StepDoOptions | undefined, fn: (context: StepRunContext) => unknown): Promise<unknown> {
    refuseSecretName(this.session.scanner, name, 'step')
    // The record's size without its value: the logged record adds the value to it.
    const headBytes = this.#assertFits(
      'step.do',
      name,
      { type: 'harness.step', toolCallId: this.toolCallId, name },
      this.session.maxStepBytes,
      'step name',
    )
    claimStepName(this.#usedNames, name)
    const stored = this.session.state.steps.get(this.toolCallId)?.get(name)
    if (stored) {
      // A secret the session learned after the value was logged (a later secret() read): the log
      // keeps it already, but the tool must not get it back, as on the run that stored it.
      if (this.session.scanner.size > 0) refuseStepSecret(this.session, name, stored.value)
      const record = {
        type: 'harness.step',
        toolCallId: this.toolCallId,
        name,
        ...(stored.value === undefined ? {} : { value: stored.value }),
      }
      await this.#traceFromLog(name, { [ATTR.outcome]: 'replayed', [ATTR.bytes]: jsonBytes(record) })
      return jsonCopy(stored.value) as never
    }
    const policy = stepPolicy(this.session.harness.options.retry, this.#retry, options)
    // The first retry's wait must end in time, as a sleep's must (a longer backoff is capped at LATEST_WAKE_MS).
    if (policy.attempts > 1 && !(this.session.clock.now() + policy.delayMs <= LATEST_WAKE_MS)) {
      throw waitTooLong(`step.do(${JSON.stringify(name)}, { delayMs: ${policy.delayMs} })`, name)
    }
    const first = await this.#nextAttempt(name, policy)
    const idempotencyKey = `${this.idPrefix}${name}`
    for (let attempt = first; ; attempt++) {
      const result = await this.#attempt(name, fn, { idempotencyKey, attempt }, policy, headBytes)
      if (!result.failed) return result.value as never
      if (result.failed.final) throw lastAttemptError(name, attempt, result.failed)
      await this.#waitUntil('step.do', name, Number(result.failed.retryAt), await this.#durableNow())
    }
  }

  /** Notes the park signals and own failures that `step`'s functions throw (see `stop`). */
  #watched(step: Step): Step {
    const watched: Record<string, unknown> = {}
    for (const [key, run] of Object.entries(step) as Array<[string, (...args: unknown[]) => Promise<unknown>]>) {
      // A rejection handler, not an async wrapper: a step's promise chain is its hot path.
      watched[key] = (...args: unknown[]) =>
        run(...args).catch((error: unknown) => {
          this.#stop ??= ownFailureIn(this.session, error)
          throw error
        })
    }
    return watched as unknown as Step
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
      doStep: (name, options, fn) => this.#doStep(name, options, fn),
      logValue: async (name, value) => {
        const headBytes = jsonBytes({ type: 'harness.step', toolCallId: this.toolCallId, name })
        return (await this.#logValue(name, value, headBytes, this.session.writer)).value
      },
      claimName: (name) => claimStepName(this.#usedNames, name),
      write: (records) => this.#write('step.do', records),
      ask: (options) => this.step.ask(options as never),
    })
    return this.#guard
  }

  readonly step: Step = this.#watched({
    do: async (name: string, a: unknown, b?: unknown) => {
      this.#assertLive('step.do')
      assertStepName('step.do', name)
      const { options, fn } = stepDoArguments(a, b)
      // Seam (step-outcome.ts): verify, once, undo, and the steps of a call that rolls back.
      if (guardApplies(this.session, this.toolCallId, options)) return this.outcomes.do(name, options, fn) as never
      return this.#doStep(name, options, fn) as never
    },
    sleep: async (name: string, ms: number) => {
      this.#assertLive('step.sleep')
      assertStepName('step.sleep', name)
      refuseSecretName(this.session.scanner, name, 'sleep')
      assertSleepMs(name, ms)
      const { state } = this.session
      let wakeAt = state.sleeps.get(this.toolCallId)?.get(name)
      const now = await this.#durableNow()
      // Seam (step-outcome.ts): a call that rolls back does not wait.
      assertNotRollingBack(this.session, this.toolCallId, name, wakeAt !== undefined && wakeAt <= now)
      if (wakeAt === undefined) {
        // The wake time is fixed on the first run, so a crash does not restart the wait.
        wakeAt = Math.ceil(now + ms)
        if (!(wakeAt <= LATEST_WAKE_MS)) throw waitTooLong(`step.sleep(${JSON.stringify(name)}, ${ms})`, name)
        const record: LogRecord = { type: 'harness.sleep', toolCallId: this.toolCallId, name, wakeAt }
        this.#assertFits('step.sleep', name, record, this.session.store.limits.maxRecordBytes, 'sleep name')
        claimStepName(this.#usedNames, name)
        await this.#write('step.sleep', [record])
      } else {
        claimStepName(this.#usedNames, name)
      }
      await this.#waitUntil('step.sleep', name, wakeAt, now)
      // What follows the sleep is a side effect of this host: its lease must still be fresh.
      await asOwn(this.session, () => this.session.leaseFresh())
    },
    ask: async (options: { name: string; message: string; schema: unknown }) => {
      this.#assertLive('step.ask')
      if (typeof options !== 'object' || options === null) {
        throw new StepError('INVALID_ARGUMENT', '', 'step.ask takes { name, message, schema }.')
      }
      const { name, message, schema } = options
      assertStepName('step.ask', name)
      refuseSecretName(this.session.scanner, name, 'question')
      if (typeof message !== 'string' || message === '' || !isWellFormedText(message)) {
        throw new StepError(
          'INVALID_ARGUMENT',
          name,
          `step.ask({ name: ${JSON.stringify(name)}, message, schema }) needs a message for the person: a non-empty string of well-formed Unicode.`,
        )
      }
      const id = questionId(this.toolCallId, name)
      const known = this.session.state.questions.get(id)
      // Seam (step-outcome.ts): a call that rolls back asks nothing.
      assertNotRollingBack(this.session, this.toolCallId, name, known?.answer !== undefined)
      if (!known) {
        const jsonSchema = convertSchemaToJsonSchema(schema as never)
        if (!jsonSchema) {
          throw new StepError(
            'INVALID_ARGUMENT',
            name,
            'step.ask needs a schema (zod or any Standard JSON Schema) so any host can check the answer.',
          )
        }
        const record: LogRecord = {
          type: 'harness.ask',
          toolCallId: this.toolCallId,
          name,
          message: this.session.scanner.redactText(message),
          schema: loggedQuestionSchema(this.session.scanner, name, jsonCopy(jsonSchema)) as JsonValue,
        }
        this.#assertFits('step.ask', name, record, this.session.store.limits.maxRecordBytes, 'name, message or schema')
        claimStepName(this.#usedNames, name)
        await this.#write('step.ask', [record])
        throw this.#question(id, name, message, undefined)
      }
      claimStepName(this.#usedNames, name)
      if (!known.answer) throw this.#question(id, name, message, known.rejected?.reason)
      // Parse with the live schema so transforms and defaults apply, as on the first run.
      const parsed = await validateWithStandardSchema(schema, known.answer.answer)
      if (parsed.success) return parsed.data as never
      // The answer passed the logged JSON Schema but not the tool's own (a refine, a new
      // deploy): it is no answer. The question opens again, so a corrected answer from any
      // host completes the call.
      const reason = this.session.scanner.redactText(
        parsed.issues.map((issue) => `${issue.path?.join('.') || '(root)'}: ${issue.message}`).join('; '),
      )
      const rejected: AnswerRejectedRecord = {
        type: 'harness.answer.rejected',
        toolCallId: this.toolCallId,
        name,
        reason,
        at: this.session.clock.now(),
      }
      await this.#write('step.ask', [rejected])
      throw this.#question(id, name, message, reason)
    },
  } as Step)

  /** Parks the call on its question; the event tells the client what to answer, and why the last answer was refused. */
  #question(id: string, name: string, message: string, rejected: string | undefined): ParkSignal {
    return this.park('ask', null, {
      sessionId: this.session.sessionId,
      questionId: id,
      toolCallId: this.toolCallId,
      name,
      message,
      schema: this.session.state.questions.get(id)?.ask.schema ?? null,
      ...(rejected === undefined ? {} : { rejected }),
    })
  }

  readonly append: AppendRecords = (records) => {
    this.#assertLive('append')
    const checked: LogRecord[] = []
    checkRecords(records, TOOL_RECORD_RULES, (record, at) => {
      const secret = this.session.scanner.find(record, at)
      if (secret) {
        throw new RecordError(
          'RECORD_SECRET',
          `${secret.path} holds a secret of the session (${secret.encoding}). The log must not keep it: log an id, not the token.`,
          secret.path,
        )
      }
      checked.push(jsonCopy(record))
    })
    this.#records.push(...checked)
  }

  /**
   * Reads a secret by name and makes it one of the session's secrets. The first read of
   * a name logs the name (never the value) before the tool gets it, so whoever opens the
   * session later resolves it again and keeps it out of the log too.
   */
  readonly secret = async (name: string): Promise<string> => {
    const { sessionSecrets, writer } = this.session
    const { value, firstUse } = await sessionSecrets.read(name)
    if (firstUse) {
      await writer.append([{ type: SECRET_USED_RECORD, name }])
      sessionSecrets.markUsed(name)
    }
    return value
  }

  contextFor(context: ToolExecutionContext | undefined): DurableToolContext {
    const durable: DurableToolContext & { [SESSION_CONTEXT]: true } = {
      ...(context as ToolExecutionContext),
      [SESSION_CONTEXT]: true,
      abortSignal: this.signal,
      emitCustomEvent: context?.emitCustomEvent ?? (() => {}),
      step: this.step,
      // A refusal names the record's type and path, which may hold a secret.
      append: (records) => scrubbed(this.session, () => this.append(records)),
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

/** Refuses a step value that holds a secret of the session (`STEP_SECRET`): the tool must not get it, nor the log keep it. */
function refuseStepSecret(session: SessionRuntime, name: string, value: unknown): void {
  const secret = session.scanner.find(value)
  if (secret) {
    throw new StepError(
      'STEP_SECRET',
      name,
      `Step ${JSON.stringify(name)} returned a secret of the session at ${secret.path} (${secret.encoding}). The log must not keep it: read the secret outside step.do and return an id, not a token.`,
      secret.path,
    )
  }
}

/** A durable wait that would end after `LATEST_WAKE_MS`: refused before anything runs or is written. */
function waitTooLong(what: string, name: string): StepError {
  return new StepError(
    'INVALID_ARGUMENT',
    name,
    `${what} would wait until after ${new Date(LATEST_WAKE_MS).toISOString()}, the latest time a durable wait may end (MAX_TIME_MS - 1). Wait for less; nothing was written.`,
  )
}

/** Runs `check`; an error it throws leaves without the session's secrets. */
function scrubbed(session: SessionRuntime, check: () => void): void {
  try {
    check()
  } catch (error) {
    throw scrubError(session.scanner, error)
  }
}

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
 * for the model, except the session's own failures and park signals, which stop the run.
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
      if (control.stopped) throw own(session, new Error('The run stopped before this tool call started; it runs when the session resumes.'))
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
        return await span.run(() => runCall(session, tool, control, { args, context, toolCallId, span }))
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
): Promise<unknown> {
  const logged = session.state.results.get(toolCallId)
  if (logged) {
    span.set({ [ATTR.outcome]: 'logged' })
    if (logged.ok) return logged.result
    throw new Error(errorMessage((logged.result as { error?: unknown })?.error))
  }
  if (tool.needsApproval && !(await approvalGate(session, tool, control, toolCallId, span))) {
    return settleDenied(session, tool, control, toolCallId, span)
  }
  try {
    // An approved call, like any call, starts only while no other host can have taken the session over.
    await asOwn(session, () => session.leaseFresh())
  } catch (caught) {
    control.stop(caught as object)
    throw caught
  }
  const call = new LiveToolCall(session, toolCallId, tool.name, context?.abortSignal, durableMetaOf(tool), span.context)
  const outcome = await applyHooks(
    session,
    tool,
    { toolCallId, args },
    await executeCall(session, tool, control, call, { args, context, span }),
  )
  const settled = await settleCall(session, tool, control, call, outcome)
  span.set({ [ATTR.outcome]: settled.ok ? 'ok' : call.deadline.expired ? 'timed-out' : 'error' })
  if (!settled.ok) throw new Error((settled.seen as { error: string }).error)
  return settled.seen
}

/** How a call ended before it is settled: its value, or the error the model will see. */
interface CallOutcome {
  ok: boolean
  value?: unknown
  error?: unknown
}

/**
 * Runs the tool (an agent's child session, a durable tool with its steps, or a plain
 * tool). Whatever it throws is the call's error, except the session's own failures and
 * park signals, which stop the run.
 */
async function executeCall(
  session: SessionRuntime,
  tool: AnyTool,
  control: ChatLoopControl,
  call: LiveToolCall,
  { args, context, span }: { args: unknown; context: ToolExecutionContext | undefined; span: HarnessSpan },
): Promise<CallOutcome> {
  const meta = durableMetaOf(tool)
  const agent = agentMetaOf(tool)
  try {
    // A durable tool runs through the tool's own execute, as chat() would call it: a
    // middleware's wrapper of it (permissions, metering) runs in a session too, and the
    // durable execute under it finds the session's context (see `isSessionContext`).
    const value = agent
      ? await runAgentCall(call, agent, args, context)
      : meta
        ? await call.deadline.race(
            // Seam (compensation.ts): a call that fails rolls back its finished steps' undo; a stop or its deadline does not.
            call.outcomes.compensations.runCall(
              () => Promise.resolve((tool.execute ?? meta.execute)(args, call.contextFor(context))),
              () => control.stopped || call.stop !== undefined || call.deadline.expired,
            ),
          )
        : await tool.execute!(args, call.contextFor(context))
    // A tool that caught its step's park signal (or a lost write) still stops the run.
    if (call.stop) throw call.stop
    return { ok: true, value }
  } catch (caught) {
    // A park or a stop first lets the call's steps in flight (the siblings in a Promise.all) log
    // how they ended: a value that is not logged would make the resumed call run its fn again.
    if (ownFailureIn(session, caught) || call.stop || control.stopped) await call.drain()
    const mine = ownFailureIn(session, caught) ?? call.stop
    if (mine) {
      span.set({ [ATTR.outcome]: isParkSignal(mine) ? 'parked' : 'stopped' })
      control.stop(mine)
      throw caught
    }
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
      control.stop(own(session, caught))
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
      control.stop(own(session, again))
      throw again
    }
    return { ok: false, seen }
  }
}

/** The failure a step's attempt cut by a crash (or a stop) gets when it was the last of its budget. */
const CUT_ATTEMPT_ERROR =
  'The attempt began and never ended: its host stopped or crashed while fn ran. No attempts are left; its side effect may have happened.'

/** The bytes a step record's JSON gains with its value, besides the value's own text. */
const VALUE_KEY_BYTES = ',"value":'.length
