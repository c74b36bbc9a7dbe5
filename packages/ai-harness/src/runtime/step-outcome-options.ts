import { HarnessError } from '../contract/errors.js'
import { checkOptions, type OptionRules } from './check-options.js'
import { StepError } from './runtime-errors.js'
import { STEP_OPTION_RULES, type StepOptions } from './step-retry.js'

/**
 * The options of `step.do` for side effects that cannot be made idempotent (an email over
 * SMTP, an SMS, a legacy payment API that takes no key): `verify`, `once` and `undo`.
 * Types and checks only; the session's behaviour is in step-outcome.ts and compensation.ts.
 */

/** What `verify` found: the effect happened (`{ done: value }`, the value the step returns), did not, or nobody can tell. */
export type VerifyVerdict<T> = { readonly done: T } | 'not-done' | 'unknown'

/** What `verify` gets: the step's key and the intent that a crash left without a value. */
export interface VerifyContext {
  /** The step's idempotency key (`${logId}:${toolCallId}:${name}`): look the effect up by it. */
  readonly idempotencyKey: string
  /** The attempt the intent was logged for (1 for the first). */
  readonly attempt: number
  /** The logged intent: when the attempt began (ms since the epoch, by the host's clock) and which attempt it was. */
  readonly intent: { readonly at: number; readonly attempt: number }
  /** The tool call's signal: aborted when the session stops the run or the attempt passes the step's `timeoutMs`. */
  readonly signal: AbortSignal
}

/** What a compensation (`undo`) gets besides the step's value. */
export interface UndoContext {
  /** The compensation's own key: `${logId}:${toolCallId}:undo(${name})` (in plain `chat()`, `plain:${toolCallId}:undo(${name})`). */
  readonly idempotencyKey: string
  /** The idempotency key of the step it undoes. */
  readonly stepKey: string
  /** Why the call is rolled back: its error's message. */
  readonly reason: string
  readonly signal: AbortSignal
}

/** The options of `step.do` for effects that cannot be made idempotent. */
export interface StepOutcomeOptions<T = unknown> {
  /**
   * Finds out whether the step's side effect happened, when a crash cut a run after its
   * `fn` began and before its value was stored. With it the step logs an intent record
   * before `fn` runs (one more write, only for this step). A run after such a crash calls
   * `verify` before anything else: `{ done: value }` stores `value` and returns it
   * without running `fn`; `'not-done'` runs `fn`; `'unknown'` runs nothing and asks a
   * person (`step.ask`, with the step, its key, when it began and what `verify` said),
   * whose answer decides: done (with the value), run again, or fail. `verify` is a step of
   * its own (`verify(<name>)#<n>`, one per intent): its verdict is logged, and it retries
   * by the step's policy (`attempts`, `delayMs`, `timeoutMs`), its retry waits parking
   * the session as a step's do.
   * In plain `chat()` nothing can crash, so `verify` is never called.
   */
  verify?: (context: VerifyContext) => VerifyVerdict<T> | Promise<VerifyVerdict<T>>
  /**
   * At most once: `fn` never runs a second time after its intent was logged. A run after
   * a crash that cut it throws `StepOutcomeUnknownError` (code `STEP_OUTCOME_UNKNOWN`),
   * which the tool can catch. A `once` step has one attempt (retry options do not apply)
   * and cannot have `verify`.
   */
  once?: boolean
  /**
   * A compensation, registered with the step's value once the step has one (run now, or
   * returned from the log). When the tool call ends in a failure (the tool throws), the
   * compensations of its finished steps run in reverse order, each as a step of its own
   * (`undo(${name})`, run at most once: a crash mid-rollback goes on with the rest and
   * never runs one twice), and the model gets a tool error (`CALL_ROLLED_BACK`) that says
   * what was undone. What `undo` returns is not kept.
   *
   * TypeScript types `undo` before `fn`: when `fn` takes its context
   * (`({ idempotencyKey }) => …`), write the value's type out, `undo: (charge: Charge, context: UndoContext) => …`,
   * or the value is `unknown`.
   */
  undo?: (value: T, context: UndoContext) => unknown
}

/** What `step.do(name, options, fn)` takes as its options: retries and a time limit, and the outcome options. */
export type StepDoOptions<T = unknown> = StepOptions & StepOutcomeOptions<T>

/** The checks of the outcome options, beside the step options' own (see `STEP_OPTION_RULES`). */
export const OUTCOME_OPTION_RULES: OptionRules = {
  verify: { accepts: 'a function ({ idempotencyKey, attempt, intent }) => { done: value } | "not-done" | "unknown"', test: isFunction },
  once: { accepts: 'true or false', test: (v) => typeof v === 'boolean' },
  undo: { accepts: 'a function (value, { idempotencyKey }) => ... that undoes the step', test: isFunction },
}

const STEP_DO_OPTION_RULES: OptionRules = { ...STEP_OPTION_RULES, ...OUTCOME_OPTION_RULES }

/** Checks the options of `step.do` (its second argument): the step options and the outcome options. */
export function checkStepDoOptions(options: unknown): asserts options is StepDoOptions | undefined {
  if (options === undefined) return
  checkOptions('step.do', options, STEP_DO_OPTION_RULES, 'options (the second argument)')
  checkOutcomeCombination(options as StepDoOptions)
}

function isFunction(v: unknown): boolean {
  return typeof v === 'function'
}

/** True when the options ask for an intent record before `fn` (`verify` or `once`). */
export function hasIntent(options: StepDoOptions | undefined): boolean {
  return options !== undefined && (options.verify !== undefined || options.once === true)
}

/** Combinations that cannot mean anything: `once` with `verify`, `once` with retries. Checked before anything runs. */
export function checkOutcomeCombination(options: StepDoOptions | undefined): void {
  if (!options?.once) return
  if (options.verify !== undefined) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      'step.do takes either once: true or verify, not both: with verify a run after a crash asks verify, with once it throws STEP_OUTCOME_UNKNOWN.',
    )
  }
  if (options.attempts !== undefined && options.attempts > 1) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `step.do with once: true runs fn at most once, so it takes no attempts > 1 (it got ${options.attempts}). Use verify to retry safely.`,
    )
  }
}

/**
 * A step with `once: true` whose earlier run began `fn` and never stored a value (a
 * crash, a lost lease): its side effect may or may not have happened, and `fn` does not
 * run again. Catch it in the tool (code `STEP_OUTCOME_UNKNOWN`) to decide: look the effect
 * up by `idempotencyKey`, or tell the model.
 */
export class StepOutcomeUnknownError extends StepError {
  readonly idempotencyKey: string
  /** When the cut attempt began (ms since the epoch). */
  readonly startedAt: number
  readonly attempt: number

  constructor(step: string, idempotencyKey: string, startedAt: number, attempt: number) {
    super(
      'STEP_OUTCOME_UNKNOWN',
      step,
      `Step ${JSON.stringify(step)} (once: true, idempotency key ${idempotencyKey}) began at ${new Date(startedAt).toISOString()} and its run stopped before its value was stored: its side effect may or may not have happened, and it does not run again. Check the effect by its key, then decide in the tool (catch code STEP_OUTCOME_UNKNOWN), or give the step a verify function instead.`,
    )
    this.name = 'StepOutcomeUnknownError'
    this.idempotencyKey = idempotencyKey
    this.startedAt = startedAt
    this.attempt = attempt
  }
}
