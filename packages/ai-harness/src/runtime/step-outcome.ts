import { fromJSONSchema } from 'zod'
import type { LogRecord } from '../contract/types.js'
import { Compensations, rollingBackError } from './compensation.js'
import { type LoggedIntent, rollingBack, type StepIntentRecord } from './outcome-records.js'
import { StepError, StepFailedError } from './runtime-errors.js'
import { questionId } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import {
  checkOutcomeCombination,
  hasIntent,
  type StepDoOptions,
  StepOutcomeUnknownError,
  type VerifyVerdict,
} from './step-outcome-options.js'
import { failureText, shortFailureText, type StepOptions } from './step-retry.js'

/**
 * `verify` and `once` in a session: the intent logged before `fn`, and what a run after a
 * crash does with an intent that has no value. `undo` is registered here and rolled back
 * by `Compensations`. A step without these options never reaches this file.
 */

/** A step's function, as `step.do` calls it. */
type StepFn = (context: { idempotencyKey: string; attempt: number; signal: AbortSignal }) => unknown

/** What the guard needs of its tool call (`LiveToolCall`): the plain step and its writes. */
export interface GuardedCall {
  readonly session: SessionRuntime
  readonly toolCallId: string
  readonly idPrefix: string
  readonly signal: AbortSignal
  /** True once the call met its stop (a park, the session's own failure): an error after it is no failure of a step. */
  stopped(): boolean
  /** The plain `step.do` of the call: its checks, its value from the log, its attempts. */
  doStep(name: string, options: StepDoOptions | undefined, fn: StepFn): Promise<unknown>
  /** Checks `value` and logs it as the step's value, as a finished `fn`'s; returns the JSON copy. */
  logValue(name: string, value: unknown): Promise<unknown>
  /** Claims the step name in the call (a second use throws `STEP_DUPLICATE_NAME`). */
  claimName(name: string): void
  write(records: LogRecord[]): Promise<void>
  ask(options: { name: string; message: string; schema: unknown }): Promise<unknown>
}

/** What a person answers when `verify` cannot tell. */
interface VerifyAnswer {
  decision: 'done' | 'run-again' | 'fail'
  /** With `done`: the value the step returns (JSON), as `fn` would have returned it. */
  value?: unknown
  /** With `fail`: why, for the tool and the model. */
  reason?: string
}

// From JSON Schema, as answers are checked: the core bundles zod's fromJSONSchema only, not its whole API.
const VERIFY_ANSWER = fromJSONSchema({
  type: 'object',
  properties: {
    decision: { type: 'string', enum: ['done', 'run-again', 'fail'] },
    value: {},
    reason: { type: 'string' },
  },
  required: ['decision'],
})

/** The question a person gets for an unknown outcome: one per intent, so a second crash asks again. */
export const verifyQuestionName = (name: string, intent: LoggedIntent) => `verify:${intent.count}:${name}`

/** The steps of one tool call with `verify`, `once` or `undo`, and its rollback. */
export class StepGuard {
  readonly #call: GuardedCall
  readonly compensations: Compensations

  constructor(call: GuardedCall) {
    this.#call = call
    this.compensations = new Compensations({
      session: call.session,
      toolCallId: call.toolCallId,
      get idPrefix() {
        return call.idPrefix
      },
      get signal() {
        return call.signal
      },
      stopped: () => call.stopped(),
      write: (records) => call.write(records),
      runStep: (name, options, fn) => this.#run(name, options, fn),
    })
  }

  /** `step.do` of a guarded step. */
  async do(name: string, options: StepDoOptions | undefined, fn: StepFn): Promise<unknown> {
    checkOutcomeCombination(options)
    const stored = this.#call.session.state.steps.get(this.#call.toolCallId)?.has(name) === true
    // A call whose rollback a crash cut runs no step it had not finished: it goes on rolling back.
    if (!stored && this.compensations.rollingBack) throw rollingBackError(name)
    const value = await this.#run(name, options, fn)
    if (options?.undo) this.compensations.register(name, value, options.undo)
    return value
  }

  async #run(name: string, options: StepDoOptions | undefined, fn: StepFn): Promise<unknown> {
    const call = this.#call
    const { state } = call.session
    if (!hasIntent(options) || state.steps.get(call.toolCallId)?.has(name)) return call.doStep(name, options, fn)
    const intent = pendingIntent(call.session, call.toolCallId, name)
    if (intent) {
      if (options!.once) {
        call.claimName(name)
        throw new StepOutcomeUnknownError(name, `${call.idPrefix}${name}`, intent.at, intent.attempt)
      }
      const verified = await this.#verify(name, options!, intent)
      if (verified) return verified.value
    }
    // A once step has one attempt, whatever the tool's or the harness's retry says.
    const runOptions = options!.once ? { ...options, attempts: 1 } : options
    return call.doStep(name, runOptions, this.#withIntent(name, fn))
  }

  /** `fn`, after its intent is logged: the attempt's first write, inside the attempt (a lost write stops the run). */
  #withIntent(name: string, fn: StepFn): StepFn {
    const call = this.#call
    return async (context) => {
      const record: StepIntentRecord = {
        type: 'harness.step.intent',
        toolCallId: call.toolCallId,
        name,
        attempt: context.attempt,
        at: call.session.clock.now(),
      }
      await call.write([record])
      return fn(context)
    }
  }

  /**
   * An intent without a value: asks `verify`, then (when it cannot tell) a person. Resolves
   * with the step's value when it is done, with undefined when `fn` must run; throws when
   * the step fails.
   */
  async #verify(name: string, options: StepDoOptions, intent: LoggedIntent): Promise<{ value: unknown } | undefined> {
    const call = this.#call
    const key = `${call.idPrefix}${name}`
    const question = verifyQuestionName(name, intent)
    // A question already asked for this intent decides: verify is not asked again while a person looks at it.
    if (!call.session.state.questions.has(questionId(call.toolCallId, question))) {
      const verdict = await this.#askVerify(name, options, key, intent)
      if (isDone(verdict)) {
        call.claimName(name)
        return { value: await call.logValue(name, verdict.done) }
      }
      if (verdict === 'not-done') return undefined
    }
    const answer = (await call.ask({ name: question, message: evidence(name, key, intent), schema: VERIFY_ANSWER })) as VerifyAnswer
    if (answer.decision === 'run-again') return undefined
    call.claimName(name)
    if (answer.decision === 'done') return { value: await call.logValue(name, answer.value) }
    throw new StepFailedError(name, intent.attempt, `a person decided it failed${answer.reason ? `: ${answer.reason}` : ''}`, false)
  }

  /**
   * Calls `verify` as a plain step of its own (`verifyStepName`): its verdict is logged as
   * that step's value (a run after a crash does not ask again), and its failed attempts as
   * that step's, so it retries by the step's policy and its retry waits park as a step's
   * do. Its last failure fails the step.
   */
  async #askVerify(name: string, options: StepDoOptions, key: string, intent: LoggedIntent): Promise<VerifyVerdict<unknown>> {
    const call = this.#call
    const verify = options.verify!
    const stepName = verifyStepName(name, intent)
    const context = { idempotencyKey: key, attempt: intent.attempt, intent: { at: intent.at, attempt: intent.attempt } }
    let thrown: { error: unknown } | undefined
    let verdict: unknown
    try {
      verdict = await call.doStep(stepName, retryOptions(options), async ({ signal }) => {
        try {
          return loggedVerdict(await verify({ ...context, signal }))
        } catch (error) {
          thrown = { error }
          throw error
        }
      })
    } catch (error) {
      if (call.stopped() || call.signal.aborted) throw error
      throw verifyFailed(call, name, stepName, error, thrown?.error === error)
    }
    if (verdict === 'not-done' || verdict === 'unknown') return verdict
    const logged = verdict as { done?: unknown; value?: unknown; invalid?: unknown }
    if (logged.done === true) return { done: logged.value }
    throw new StepError(
      'INVALID_ARGUMENT',
      name,
      `verify of step ${JSON.stringify(name)} must return { done: value }, 'not-done' or 'unknown'; it returned ${String(logged.invalid)}.`,
    )
  }
}

/** The step that asks `verify` about one intent of step `name`: one per intent, as its question. */
export const verifyStepName = (name: string, intent: LoggedIntent) => `verify(${name})#${intent.count}`

/**
 * A verdict as its step logs it: `{ done: true, value }` (a JSON object drops an undefined
 * `done`, and a step's value may be undefined), the two words as they are, and what
 * anything else was, for the error.
 */
function loggedVerdict(verdict: unknown): unknown {
  if (isDone(verdict)) return { done: true, value: verdict.done }
  if (verdict === 'not-done' || verdict === 'unknown') return verdict
  return { invalid: typeof verdict === 'string' ? JSON.stringify(verdict) : typeof verdict }
}

/** The retry options of a step, for its `verify` step (which has no verify, once or undo of its own). */
function retryOptions(options: StepDoOptions): StepOptions {
  const { attempts, delayMs, backoff, maxDelayMs, isFinal, timeoutMs } = options
  return { attempts, delayMs, backoff, maxDelayMs, isFinal, timeoutMs }
}

/**
 * The failure of the step whose `verify` failed for good: the last error of verify (thrown
 * on this run, or its logged failure), in the step's name. A refusal of the verify step
 * itself (a verdict too large to log, a secret in it) passes as it is.
 */
function verifyFailed(call: GuardedCall, name: string, stepName: string, error: unknown, ownError: boolean): unknown {
  if (error instanceof StepFailedError && error.step === stepName)
    return new StepFailedError(name, error.attempts, `verify ${error.timedOut ? 'timed out' : 'threw'}: ${error.lastError}`, error.timedOut)
  if (!ownError) return error
  const attempts = call.session.state.stepFailures.get(call.toolCallId)?.get(stepName)?.attempts ?? 1
  const text = call.session.scanner.redactText(shortFailureText(failureText(error)))
  return new StepFailedError(name, attempts, `verify threw: ${text}`, false)
}

/**
 * Whether a step goes through the guard: it has `verify`, `once` or `undo`, or its call is
 * rolling back. A plain step pays one map lookup for it.
 */
export function guardApplies(session: SessionRuntime, toolCallId: string, options: StepDoOptions | undefined): boolean {
  return (options !== undefined && (hasIntent(options) || options.undo !== undefined)) || rollingBack(session.state.outcomes, toolCallId)
}

/**
 * Seam of `step.sleep` and `step.ask`: in a call that rolls back, a sleep not yet over or a
 * question not yet answered stops the call (`CALL_ROLLED_BACK`) instead of waiting.
 */
export function assertNotRollingBack(session: SessionRuntime, toolCallId: string, name: string, done: boolean): void {
  if (!done && rollingBack(session.state.outcomes, toolCallId)) throw rollingBackError(name)
}

function isDone(verdict: unknown): verdict is { done: unknown } {
  return typeof verdict === 'object' && verdict !== null && 'done' in verdict
}

/**
 * The intent of a step that a crash (or a stop) left without an outcome: an intent whose
 * attempt has neither a value nor a logged failure.
 */
export function pendingIntent(session: SessionRuntime, toolCallId: string, name: string): LoggedIntent | undefined {
  const { state } = session
  const intent = state.outcomes.intents.get(toolCallId)?.get(name)
  if (!intent || state.steps.get(toolCallId)?.has(name)) return undefined
  const failed = state.stepFailures.get(toolCallId)?.get(name)?.attempts ?? 0
  return failed >= intent.attempt ? undefined : intent
}

/** What the person reads: the step, its key, when it began, what verify said, and what to answer. */
function evidence(name: string, key: string, intent: LoggedIntent): string {
  return `Step ${JSON.stringify(name)} (idempotency key ${key}) began attempt ${intent.attempt} at ${new Date(intent.at).toISOString()}, and its run stopped before its value was stored. verify said "unknown": it cannot tell whether the side effect happened. Answer { "decision": "done", "value": ... } if it happened (value is what the step returns), { "decision": "run-again" } to run it again, or { "decision": "fail", "reason": ... } to fail the step.`
}
