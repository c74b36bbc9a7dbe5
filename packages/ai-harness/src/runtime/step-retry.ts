import { MAX_TIME_MS } from '../contract/types.js'
import { checkOptions, isObject, type OptionRule, type OptionRules } from './check-options.js'
import { MAX_TIMER_MS } from '../store/option-checks.js'
import { StepError } from './runtime-errors.js'

/**
 * How `step.do` retries a failing `fn` and how long one attempt may take. Given per
 * step (`step.do(name, options, fn)`), or as a default with `retry` on `defineHarness`
 * and on `durableTool`; the step's own options win, then the tool's, then the harness's,
 * key by key.
 */
export interface StepOptions {
  /** Attempts in all, the first one included: an integer >= 1. Default 1 (no retry). */
  attempts?: number
  /** The wait before the second attempt, in ms. Default 1 000. */
  delayMs?: number
  /** Each later wait is the one before times this factor (>= 1). Default 2. */
  backoff?: number
  /** No wait is longer than this, in ms. Default: no limit. */
  maxDelayMs?: number
  /**
   * True for an error that no attempt can fix (a declined card, a refused input): the
   * step fails at once. A `NonRetryableError` is always final, whatever this says. A
   * predicate that throws counts as true.
   */
  isFinal?: (error: unknown, attempt: number) => boolean
  /**
   * The longest one attempt may take, in ms (at most 2^31 - 1). At the limit its
   * `signal` aborts (reason: a `TimeoutError`), the attempt counts as failed, and the
   * next attempt may start while the timed-out one still runs: its side effect may
   * still happen, which the idempotency key (the same on every attempt) makes safe.
   */
  timeoutMs?: number
}

/** The options of one step after the defaults: every field but the predicate and the timeout is set. */
export interface StepPolicy {
  readonly attempts: number
  readonly delayMs: number
  readonly backoff: number
  readonly maxDelayMs: number
  readonly isFinal: StepOptions['isFinal']
  readonly timeoutMs: number | undefined
}

export const DEFAULT_STEP_POLICY: StepPolicy = {
  attempts: 1,
  delayMs: 1_000,
  backoff: 2,
  maxDelayMs: Number.POSITIVE_INFINITY,
  isFinal: undefined,
  timeoutMs: undefined,
}

const FINAL = Symbol.for('@tanstack/ai-harness/non-retryable')

/**
 * Thrown from a step's `fn` to say that trying again cannot help (a declined card, an
 * order that does not exist): the step fails at once, without the attempts left.
 * Known by a brand, so it works across two copies of this package.
 */
export class NonRetryableError extends Error {
  readonly [FINAL] = true

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'NonRetryableError'
  }
}

/** True for a `NonRetryableError` (from any copy of this package). */
export function isNonRetryable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { [FINAL]?: unknown })[FINAL] === true
}

const whole = (min: number) => (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= min
const finite =
  (min: number, max = Number.MAX_VALUE) =>
  (v: unknown) =>
    typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max

export const STEP_OPTION_RULES: OptionRules = {
  attempts: { accepts: 'a whole number of attempts >= 1 (the first one included), e.g. 3', test: whole(1) },
  delayMs: { accepts: 'a number of milliseconds >= 0, e.g. 1000', test: finite(0) },
  backoff: { accepts: 'a factor >= 1, e.g. 2 (each wait doubles)', test: finite(1) },
  maxDelayMs: { accepts: 'a number of milliseconds >= 0, e.g. 60000', test: finite(0) },
  isFinal: { accepts: 'a function, e.g. (error) => error.status === 400', test: (v) => typeof v === 'function' },
  timeoutMs: {
    accepts: `a number of milliseconds > 0, at most ${MAX_TIMER_MS}, e.g. 10000`,
    test: (v) => finite(0, MAX_TIMER_MS)(v) && v !== 0,
  },
}

/** The rule of a factory option that takes step options (`retry` of `defineHarness` and `durableTool`). */
export const STEP_OPTIONS_RULE: OptionRule = {
  accepts: 'step options { attempts, delayMs, backoff, maxDelayMs, isFinal, timeoutMs }, e.g. { attempts: 3 }',
  test: isObject,
}

/** Checks step options given to `where` (a factory option, or step.do's second argument). */
export function checkStepOptions(where: string, options: unknown, what: string): asserts options is StepOptions | undefined {
  if (options !== undefined) checkOptions(where, options, STEP_OPTION_RULES, what)
}

/** The policy of one step: the defaults, then each level's options in turn (later ones win, key by key). */
export function stepPolicy(...levels: ReadonlyArray<StepOptions | undefined>): StepPolicy {
  const policy: { -readonly [K in keyof StepPolicy]: StepPolicy[K] } = { ...DEFAULT_STEP_POLICY }
  for (const level of levels) {
    if (!level) continue
    for (const key of Object.keys(STEP_OPTION_RULES) as Array<keyof StepOptions>) {
      if (level[key] !== undefined) (policy as Record<string, unknown>)[key] = level[key]
    }
  }
  return policy
}

/**
 * The latest time a durable wait may end at (a sleep's wake time, a retry's due time): just
 * before `WAITING_FOR_PERSON` (= `MAX_TIME_MS`), the never-due wakeup that marks a session
 * waiting for a person, so a long wait is never listed as one.
 */
export const LATEST_WAKE_MS = MAX_TIME_MS - 1

/** The wait after the failed attempt `attempt` (1 for the first): delayMs × backoff^(attempt-1), at most maxDelayMs. */
export function retryDelay(policy: StepPolicy, attempt: number): number {
  if (policy.delayMs === 0) return 0
  // Never past the latest time a store keeps, however long the backoff grows.
  return Math.min(policy.delayMs * policy.backoff ** (attempt - 1), policy.maxDelayMs, MAX_TIME_MS)
}

/** When the attempt after the failed attempt `attempt` (logged at `at`) is due: never later than `LATEST_WAKE_MS`. */
export function retryAt(policy: StepPolicy, attempt: number, at: number): number {
  return Math.min(LATEST_WAKE_MS, Math.ceil(at + retryDelay(policy, attempt)))
}

/** Whether the failure of attempt `attempt` ends the step: no attempts left, a `NonRetryableError`, or the predicate says so. */
export function isFinalFailure(policy: StepPolicy, error: unknown, attempt: number): boolean {
  if (attempt >= policy.attempts || isNonRetryable(error)) return true
  if (!policy.isFinal) return false
  try {
    return policy.isFinal(error, attempt) === true
  } catch {
    return true
  }
}

/** The text of a failed attempt, as the log keeps it (before secrets are cut). */
export function failureText(error: unknown): string {
  if (error instanceof Error || (typeof error === 'object' && error !== null && typeof (error as Error).message === 'string')) {
    const { name, message } = error as Error
    return name && name !== 'Error' ? `${name}: ${message}` : message
  }
  return typeof error === 'string' ? error : `a thrown ${error === null ? 'null' : typeof error}`
}

/** The longest failure text a `harness.step.failed` record keeps, in UTF-16 code units. */
export const MAX_FAILURE_TEXT = 2_000

/** Cuts a failure text to `max` code units (and a "…"), never inside a surrogate pair. */
export function shortFailureText(text: string, max = MAX_FAILURE_TEXT): string {
  if (text.length <= max) return text
  let end = max
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end)}…`
}

/** A durable wait that would end after `LATEST_WAKE_MS`: refused before anything runs or is written. */
export function waitTooLong(what: string, name: string): StepError {
  return new StepError(
    'INVALID_ARGUMENT',
    name,
    `${what} would wait until after ${new Date(LATEST_WAKE_MS).toISOString()}, the latest time a durable wait may end (MAX_TIME_MS - 1). Wait for less; nothing was written.`,
  )
}
