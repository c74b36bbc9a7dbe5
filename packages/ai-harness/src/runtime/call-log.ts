import { HarnessError } from '../contract/errors.js'
import type { LogRecord } from '../contract/types.js'
import { jsonBytes, jsonCopy, utf8Length } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { refuseSecretName, refuseStepSecret, scrubbed } from '../secrets/step-checks.js'
import { assertStepJson, assertStepName, claimStepName, stepDoArguments } from './durable-tool.js'
import type { StepFailedRecord, StepStartedRecord } from './records.js'
import type { CallStop, ParkReason } from './run-stop.js'
import { StepError, StepFailedError, toolCallSettled } from './runtime-errors.js'
import type { SessionRuntime } from './session-runtime.js'
import type { SessionWriter } from './session-writer.js'
import type { CallJournal, RecordedFailure, StepAttempt, StepBegun, StepLookup } from './step-engine.js'
import { guardApplies } from './step-outcome.js'
import type { StepDoOptions } from './step-outcome-options.js'
import {
  failureText,
  isFinalFailure,
  LATEST_WAKE_MS,
  retryAt,
  shortFailureText,
  type StepOptions,
  type StepPolicy,
  stepPolicy,
  waitTooLong,
} from './step-retry.js'
import { waitFor } from './timers.js'
import { ATTR, type Attributes, type HarnessSpan, type OtelContext, startSpan } from './tracing.js'

/**
 * The session log as one tool call's step journal (see `StepJournal`): what the log holds
 * of the call's steps, the writes of the call while it lives, its durable clock and waits,
 * and the spans of its steps. A write or a clock that fails is the session's own failure,
 * noted on the call's stop authority (`stop`), as is a park.
 */
export class CallLog implements CallJournal {
  #ended = false
  /** The step, sleep and question names the call used: each once. */
  readonly #usedNames = new Set<string>()
  /** The call is parking: attempts in flight finish and log, and no new attempt starts. */
  #draining = false
  /** The step attempts running now (their fn, then the record of how it ended). */
  readonly #inFlight = new Set<Promise<void>>()

  constructor(
    readonly session: SessionRuntime,
    /** The call's stop authority: the writes' failures and the waits' parks are noted there. */
    readonly stop: CallStop,
    readonly toolCallId: string,
    readonly toolName: string,
    /** The turn run's abort signal: aborted when the session stops the run. */
    readonly turnRunSignal: AbortSignal,
    /** The call's signal: the run's, and the call's time limit. */
    readonly signal: AbortSignal,
    /** The context of the call's span: step spans are its children. */
    readonly trace: OtelContext | undefined,
    /** True once the call's time limit passed: the call has ended then, whoever notices first. */
    private readonly timeUp: () => boolean = () => false,
    /** The step options of the call's tool (`durableTool({ retry })`). */
    private readonly retry?: StepOptions,
  ) {}

  /** `step.do`'s checks before anything runs; a step with `verify`, `once` or `undo` (or of a call that rolls back) is `guarded`. */
  begin(name: string, a: unknown, b: unknown): StepBegun {
    this.assertLive('step.do')
    assertStepName('step.do', name)
    const { options, fn } = stepDoArguments(a, b)
    if (guardApplies(this.session, this.toolCallId, options)) return { guarded: true, options, fn }
    return { guarded: false, policy: this.prepare(name, options), fn }
  }

  /** A plain step's checks that need the session (no secret in its name, its record fits, its name unused), and its policy. */
  prepare(name: string, options: StepDoOptions | undefined): StepPolicy {
    refuseSecretName(this.session.scanner, name, 'step')
    // The record's size without its value: the logged record adds the value to it.
    const head = { type: 'harness.step', toolCallId: this.toolCallId, name }
    this.assertFits('step.do', name, head, this.session.maxStepBytes, 'step name')
    this.claimName(name)
    return stepPolicy(this.session.harness.options.retry, this.retry, options)
  }

  /** Claims a step, sleep or question name in the call (a second use throws `STEP_DUPLICATE_NAME`). */
  claimName(name: string): void {
    claimStepName(this.#usedNames, name)
  }

  get idPrefix(): string {
    return `${this.session.sessionId}:${this.toolCallId}:`
  }

  keyOf(name: string): string {
    return `${this.idPrefix}${name}`
  }

  /** The call's execute settled (or its time ran out): later step calls are refused. */
  end(): void {
    this.#ended = true
  }

  assertLive(what: string): void {
    if (this.#ended || this.timeUp()) throw toolCallSettled(what, this.toolCallId, this.toolName)
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
  write(what: string, records: LogRecord[], owned = false, writer = this.session.writer): Promise<void> {
    this.assertLive(what)
    return writer.append(records, { owned }).catch((error: unknown) => {
      throw this.stop.fail(error)
    })
  }

  /** A durable time: the store's clock when it has one, so wake times do not depend on this host's clock. */
  durableNow(): Promise<number> {
    const { store, clock } = this.session
    return this.stop.own(() => (store.now ? store.now() : clock.now()))
  }

  /** A record of this call must fit the store before anything runs: a step's name, a sleep, a question. */
  assertFits(what: string, name: string, record: LogRecord, limit: number, part: string): number {
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

  /** Parks the call: the run stops on purpose, the call stays open, and the parked step does not settle. */
  park(reason: ParkReason, until: number | null, event: Record<string, unknown>): Promise<never> {
    return this.stop.park({ toolCallId: this.toolCallId, reason, until, event })
  }

  /**
   * Waits until the logged time `until` (a sleep's wake time, a retry's due time): in the
   * process up to `parkAfterMs`, else the session parks and a worker resumes it then.
   * The time is in the log, so a run stopped while it waits goes on waiting when the
   * session resumes.
   */
  async waitUntil(what: string, name: string, until: number, now: number): Promise<void> {
    const remaining = until - now
    if (remaining <= 0) return
    if (remaining > this.session.parkAfterMs) return this.park('sleep', until, { name, wakeAt: until })
    await waitFor(remaining, this.signal, () =>
      // The call's own time limit ends only the call; a stopped run is the session's own.
      this.turnRunSignal.aborted
        ? this.stop.fail(
            new HarnessError(
              'LEASE_LOST',
              `The run stopped (cancel, hand-off, close or a lost lease) while ${what}(${JSON.stringify(name)}) waited; this host writes nothing more to the call, and the wait goes on when the session resumes.`,
            ),
          )
        : this.signal.reason,
    )
    this.assertLive(what)
  }

  stepSpan(name: string, attributes: Attributes): HarnessSpan | Promise<HarnessSpan> {
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

  lookup(name: string, policy: StepPolicy): Promise<StepLookup> {
    return lookupStep(this, name, policy)
  }

  async waitRetry(name: string, _attempt: number, _policy: StepPolicy, failure: RecordedFailure): Promise<void> {
    await this.waitUntil('step.do', name, Number(failure.retryAt), await this.durableNow())
  }

  /**
   * Opens one attempt, in a span of its own (fn's spans nest under it): this host's lease
   * must be fresh and its writer open, and an attempt of a step with retries is logged
   * before fn runs, so one cut by a crash still counts. A parking call opens none.
   */
  async open(name: string, attempt: number, policy: StepPolicy): Promise<StepAttempt> {
    // A parking call starts nothing more: the attempt runs when the session resumes.
    if (this.#draining) throw this.stop.fail(toolCallSettled('step.do', this.toolCallId, this.toolName))
    let ended = () => {}
    const inFlight = new Promise<void>((resolve) => {
      ended = resolve
    })
    this.#inFlight.add(inFlight)
    const span = await this.stepSpan(name, { [ATTR.attempt]: attempt, [ATTR.replayed]: false })
    let scope: { writer: SessionWriter; release: () => void } | undefined
    const close = (thrown?: unknown) => {
      if (thrown !== undefined) span.fail(thrown)
      scope?.release()
      span.end()
      this.#inFlight.delete(inFlight)
      ended()
    }
    try {
      // A step must not start a side effect it could never log.
      try {
        this.session.writer.assertWritable()
        scope = this.session.stepScope()
      } catch (error) {
        throw this.stop.fail(error)
      }
      // Nor one that another host may start too: by this host's clock its lease must be fresh.
      await this.stop.own(() => this.session.leaseFresh())
      if (policy.attempts > 1) await logStart(this, name, attempt, scope.writer)
    } catch (error) {
      close(error)
      throw error
    }
    return openAttempt(this, name, attempt, policy, span, scope.writer, close)
  }
}

/** The span of a step answered from the log (its value, or its final failure): fn does not run. */
async function traceFromLog(log: CallLog, name: string, attributes: Attributes): Promise<void> {
  const span = await log.stepSpan(name, { ...attributes, [ATTR.replayed]: true })
  span.end()
}

/** The failure a step's attempt cut by a crash (or a stop) gets when it was the last of its budget. */
const CUT_ATTEMPT_ERROR =
  'The attempt began and never ended: its host stopped or crashed while fn ran. No attempts are left; its side effect may have happened.'

/** The bytes a step record's JSON gains with its value, besides the value's own text. */
const VALUE_KEY_BYTES = ',"value":'.length

/**
 * The step's value from the log (a secret the session learned since refuses it), or the
 * attempt it goes on with: after its last logged failure (once its retry is due), or
 * after an attempt that began and never ended (cut by a crash or a stop: it counts). A
 * step out of attempts, or whose failure was final, throws its `StepFailedError`
 * without calling fn, on this run and every later one.
 */
async function lookupStep(log: CallLog, name: string, policy: StepPolicy): Promise<StepLookup> {
  const { state, scanner } = log.session
  const stored = state.steps.get(log.toolCallId)?.get(name)
  if (stored) {
    // A secret the session learned after the value was logged (a later secret() read): the log
    // keeps it already, but the tool must not get it back, as on the run that stored it.
    if (scanner.size > 0) refuseStepSecret(scanner, name, stored.value)
    const record = {
      type: 'harness.step',
      toolCallId: log.toolCallId,
      name,
      ...(stored.value === undefined ? {} : { value: stored.value }),
    }
    await traceFromLog(log, name, { [ATTR.outcome]: 'replayed', [ATTR.bytes]: jsonBytes(record) })
    return { found: true, value: jsonCopy(stored.value) }
  }
  // The first retry's wait must end in time, as a sleep's must (a longer backoff is capped at LATEST_WAKE_MS).
  if (policy.attempts > 1 && !(log.session.clock.now() + policy.delayMs <= LATEST_WAKE_MS)) {
    throw waitTooLong(`step.do(${JSON.stringify(name)}, { delayMs: ${policy.delayMs} })`, name)
  }
  const failures = state.stepFailures.get(log.toolCallId)?.get(name)
  const failed = failures?.attempts ?? 0
  if (failures && (failures.last.final || failed >= policy.attempts)) {
    await traceFromLog(log, name, { [ATTR.outcome]: 'failed', [ATTR.attempt]: failed })
    throw new StepFailedError(name, failed, failures.last.error, failures.last.timedOut)
  }
  const started = state.stepStarts.get(log.toolCallId)?.get(name) ?? 0
  if (started > failed) {
    if (started < policy.attempts) return { found: false, attempt: started + 1 }
    // The budget ran out on a cut attempt (a fn that kills its host, say): the step fails for good.
    const record = await logFailure(log, name, policy, started, new Error(CUT_ATTEMPT_ERROR), false)
    throw new StepFailedError(name, started, record.error, false)
  }
  if (typeof failures?.last.retryAt === 'number') await log.waitUntil('step.do', name, failures.last.retryAt, await log.durableNow())
  return { found: false, attempt: failed + 1 }
}

function openAttempt(
  log: CallLog,
  name: string,
  attempt: number,
  policy: StepPolicy,
  span: HarnessSpan,
  writer: SessionWriter,
  close: (thrown?: unknown) => void,
): StepAttempt {
  const headBytes = jsonBytes({ type: 'harness.step', toolCallId: log.toolCallId, name })
  return {
    run: (work) => span.run(work),
    recordValue: async (value) => {
      const logged = await logValue(log, name, value, headBytes, writer)
      span.set({ [ATTR.outcome]: 'ran', [ATTR.bytes]: logged.bytes })
      return logged.value
    },
    recordFailure: async (error, timedOut, final) => {
      span.set({ [ATTR.outcome]: timedOut ? 'timed-out' : 'failed' })
      span.fail(error)
      // A step without retries logs nothing when fn throws (a later run calls fn again):
      // only attempts that a crash must not forget are logged.
      if (policy.attempts === 1) return {}
      const record = await logFailure(log, name, policy, attempt, error, timedOut, writer, final)
      return typeof record.retryAt === 'number' ? { retryAt: record.retryAt } : {}
    },
    stopped: () => span.set({ [ATTR.outcome]: 'stopped' }),
    close,
  }
}

/** Logs that attempt `attempt` of a step with retries begins (see `StepStartedRecord`). */
async function logStart(log: CallLog, name: string, attempt: number, writer: SessionWriter): Promise<void> {
  const record: StepStartedRecord = {
    type: 'harness.step.started',
    toolCallId: log.toolCallId,
    name,
    attempt,
    at: log.session.clock.now(),
  }
  await log.write('step.do', [record], false, writer)
}

/** Checks a step's value and logs it; resolves with the JSON copy a later run gets too, and the record's size. */
export async function logValue(
  log: CallLog,
  name: string,
  value: unknown,
  headBytes: number,
  writer: SessionWriter,
): Promise<{ value: unknown; bytes: number }> {
  // fn finished after the call ended (a dangling step): its value belongs to no call.
  log.assertLive('step.do')
  // Its path can name a key that holds a secret.
  scrubbed(log.session.scanner, () => assertStepJson(name, value))
  refuseStepSecret(log.session.scanner, name, value)
  const record: LogRecord = { type: 'harness.step', toolCallId: log.toolCallId, name }
  // One JSON text of the value: the record's copy and the caller's copy are parsed from it,
  // and the record's size is counted from it (the record's JSON is its head, then `,"value":` and the text).
  const text = value === undefined ? undefined : JSON.stringify(value)
  let bytes = headBytes
  if (text !== undefined) {
    record.value = JSON.parse(text) as JsonValue
    bytes += VALUE_KEY_BYTES + utf8Length(text)
  }
  if (bytes > log.session.maxStepBytes) {
    throw new StepError(
      'STEP_TOO_LARGE',
      name,
      `Step ${JSON.stringify(name)} returned ${bytes} bytes of JSON, over the limit of ${log.session.maxStepBytes}. Keep step values small: store big data elsewhere and return its id.`,
    )
  }
  // The record is parsed from our own text and nobody else holds it: the fold keeps it without a copy.
  await log.write('step.do', [record], true, writer)
  return { value: text === undefined ? undefined : JSON.parse(text), bytes }
}

/**
 * Logs a failed attempt (its error without the session's secrets), before any retry
 * waits: after a crash the attempts go on from the log. A failure that is not final
 * has `retryAt`, the next attempt's due time.
 */
export async function logFailure(
  log: CallLog,
  name: string,
  policy: StepPolicy,
  attempt: number,
  error: unknown,
  timedOut: boolean,
  writer = log.session.writer,
  final = isFinalFailure(policy, error, attempt),
): Promise<StepFailedRecord> {
  const at = await log.durableNow()
  const record: StepFailedRecord = {
    type: 'harness.step.failed',
    toolCallId: log.toolCallId,
    name,
    attempt,
    // Redacted before it is cut: a secret across the cut would leave its first part in the log.
    error: shortFailureText(log.session.scanner.redactText(failureText(error))),
    timedOut,
    final,
    at,
  }
  if (!final) record.retryAt = retryAt(policy, attempt, at)
  // A long message must not make the record too large for the store: it is cut further.
  while (jsonBytes(record) > log.session.store.limits.maxRecordBytes && record.error.length > 16) {
    record.error = shortFailureText(record.error, Math.floor(record.error.length / 2))
  }
  await log.write('step.do', [record], false, writer)
  return record
}
