import type { JsonObject, JsonValue } from '../json/json-types.js'

/**
 * The step feature's part of the log: its records and how the fold keeps them in a call's
 * journal (`CallState`). A settled call never reads its steps again (its logged result
 * answers), so `forgetSteps` drops them when it settles: memory stays flat over long sessions.
 */

/** A finished step of a tool call. `value` is absent for a step that returned nothing. */
export interface StepRecord extends JsonObject {
  type: 'harness.step'
  toolCallId: string
  name: string
}

/**
 * An attempt of a `step.do` failed (its `fn` threw or timed out). The log keeps every
 * failed attempt, so after a crash the attempts go on from the count here, and a step
 * whose failure was `final` stays failed: a later run throws the same error without
 * calling `fn`. A failure that is not final has `retryAt`, when the next attempt is due
 * (a field that is absent on a final failure).
 */
export interface StepFailedRecord extends JsonObject {
  type: 'harness.step.failed'
  toolCallId: string
  name: string
  /** 1 for the first attempt. */
  attempt: number
  /** What the attempt threw (its name and message), with the session's secrets replaced. */
  error: string
  /** True when the attempt timed out (the step's `timeoutMs`). */
  timedOut: boolean
  /** True when no attempt follows: the attempts ran out, or the error was final. */
  final: boolean
  at: number
}

/**
 * An attempt of a `step.do` with retries (`attempts` > 1) begins: logged before its fn
 * runs, so an attempt cut by a crash still counts against the budget. A later run goes on
 * with the next attempt, and a step whose last attempt was cut fails for good. A step
 * without retries logs no start (it costs one write).
 */
export interface StepStartedRecord extends JsonObject {
  type: 'harness.step.started'
  toolCallId: string
  name: string
  /** 1 for the first attempt. */
  attempt: number
  at: number
}

/** A stored step: `value` is undefined for a step whose function returned nothing. */
export interface StoredStep {
  readonly value: JsonValue | undefined
}

/** The failed attempts of a step that has no value yet: how many, and the last one. */
export interface StepFailures {
  /** The highest attempt number logged as failed. */
  readonly attempts: number
  readonly last: StepFailedRecord
}

/** A call's steps, by step name; each map is absent until the call logs its first record of that kind. */
export interface StepJournal {
  /** Stored steps. */
  steps: Map<string, StoredStep> | undefined
  /** Failed attempts of steps without a value. */
  failures: Map<string, StepFailures> | undefined
  /** The highest attempt begun (`harness.step.started`) of steps with retries and no value. */
  starts: Map<string, number> | undefined
}

export function foldStep(call: StepJournal, record: StepRecord): void {
  call.steps ??= new Map()
  call.steps.set(record.name, { value: record.value })
}

export function foldStepFailed(call: StepJournal, record: StepFailedRecord): void {
  call.failures ??= new Map()
  const before = call.failures.get(record.name)?.attempts ?? 0
  call.failures.set(record.name, { attempts: Math.max(before, Number(record.attempt)), last: record })
}

export function foldStepStarted(call: StepJournal, record: StepStartedRecord): void {
  call.starts ??= new Map()
  call.starts.set(record.name, Math.max(call.starts.get(record.name) ?? 0, Number(record.attempt)))
}

/** The call settled: its steps are never read again. */
export function forgetSteps(call: StepJournal): void {
  call.steps = undefined
  call.failures = undefined
  call.starts = undefined
}
