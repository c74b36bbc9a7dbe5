import { jsonCopy } from '../json/check-json.js'
import { StepFailedError, toolCallSettled } from './runtime-errors.js'
import { failureText, isFinalFailure, retryDelay, type StepPolicy } from './step-retry.js'
import { waitFor } from './timers.js'

/** What `step.do` passes to its function (re-exported by `durable-tool.ts`). */
export interface StepRunContext {
  /**
   * `${logId}:${toolCallId}:${name}`, where `logId` is the session id (the store's name
   * for it): the same on every run of the step, so the system that performs the side
   * effect can refuse a second call. `toolCallId` is the call's id
   * in the session log (see `LoggedToolCall.id`: the model's id, or `${id}-${n}` when the
   * model reused an id).
   */
  readonly idempotencyKey: string
  /**
   * The tool call's abort signal (TanStack AI's `ToolExecutionContext.abortSignal`):
   * aborted when the session stops the run (cancel, hand-off for a deploy, close, a lost
   * lease), when the attempt passes the step's `timeoutMs`, and when the call passes the
   * tool's `timeoutMs`. Pass it to `fetch` and other calls that take one, so a stopped
   * session does not wait for them. A step stopped this way has an unknown outcome: the
   * next run of the step uses the same idempotency key.
   */
  readonly signal: AbortSignal
  /**
   * 1 for the first attempt, 2 for the first retry, …; counted across crashes (the log
   * keeps every failed attempt). The idempotency key does not change with it.
   */
  readonly attempt: number
}

/** What the journal knows of a step before any attempt: its value, or the attempt to run next. */
export type StepLookup = { readonly found: true; readonly value: unknown } | { readonly found: false; readonly attempt: number }

/** How the journal kept a failed attempt: when the next attempt is due, if it keeps times. */
export interface RecordedFailure {
  readonly retryAt?: number
}

/** One attempt as a journal keeps it: opened before `fn` runs, closed however it ended. */
export interface StepAttempt {
  /** Runs the attempt's `fn` (in the attempt's span, for a session). */
  run<T>(work: () => Promise<T>): Promise<T>
  /** Keeps the value `fn` returned; resolves with the copy the tool gets (the same one a later run gets). */
  recordValue(value: unknown): Promise<unknown>
  /** The attempt failed (`fn` threw or timed out): keeps it, when a crash must not forget it. */
  recordFailure(error: unknown, timedOut: boolean, final: boolean): Promise<RecordedFailure>
  /** The attempt ended with the run's stop: neither a value nor a failure. */
  stopped(): void
  /** The attempt ended, once: `thrown` is what passed out of it (a stop, a failed write), if anything did. */
  close(thrown?: unknown): void
}

/**
 * Where a call's steps are kept. A durable session's journal is its log (`CallLog`):
 * a step found there returns its value, an attempt is logged, a retry waits for its
 * logged due time. Plain `chat()`'s is in memory (`plainJournal`): every step runs.
 */
export interface StepJournal {
  /** The idempotency key of the step: the same on every run of it. */
  keyOf(name: string): string
  /** The step's value, or the attempt to run next; a step whose journal holds a final failure throws it. */
  lookup(name: string, policy: StepPolicy): Promise<StepLookup>
  /** Before `fn` runs: the lease bound (this host may still start a side effect), and the attempt's start when it must count after a crash. */
  open(name: string, attempt: number, policy: StepPolicy): Promise<StepAttempt>
  /** Waits until the attempt after the failed attempt `attempt` is due (a session may park for it). */
  waitRetry(name: string, attempt: number, policy: StepPolicy, failure: RecordedFailure): Promise<void>
}

/** How `step.do` begins in a call: a plain step with its policy, or one that `step-outcome.ts` guards. */
export type StepBegun =
  | { readonly guarded: false; readonly policy: StepPolicy; readonly fn: (context: StepRunContext) => unknown }
  | { readonly guarded: true; readonly options: StepDoOptionsLike; readonly fn: (context: StepRunContext) => unknown }

/** The step options a guarded step goes on with (`StepDoOptions`, which this engine does not read). */
type StepDoOptionsLike = object | undefined

/** A tool call's journal in a session (`CallLog`): the checks of a step before it runs, then the engine's journal. */
export interface CallJournal extends StepJournal {
  /** The checks of `step.do(name, a, b)` before anything runs; what the step goes on with. */
  begin(name: string, a: unknown, b: unknown): StepBegun
}

/** What a call's step API needs of its call (`LiveToolCall`) besides its journal. */
export interface StepSite {
  readonly journal: CallJournal
  readonly stop: StepStop
  /** A step with `verify`, `once` or `undo`, or of a call that rolls back (`step-outcome.ts`). */
  guarded(name: string, options: StepDoOptionsLike, fn: (context: StepRunContext) => unknown): Promise<unknown>
  sleep(name: string, ms: number): Promise<void>
  ask(options: { name: string; message: string; schema: unknown }): Promise<unknown>
  /** What the tool gets for a step that threw: the error, or a promise that does not settle once the call met its stop. */
  failed(error: unknown): Promise<never>
}

/**
 * The step API of a tool call in a session, as the tool gets it: `step.do` checks the step
 * in the call's journal (`begin`) and runs it on the step engine (`runStep`); `sleep` and
 * `ask` are the call's waits. A step that meets the call's stop (a park, the session's own
 * failure) stays pending in the tool (`failed`), so no control flow crosses its code.
 */
export function callSteps(site: StepSite): {
  do(name: string, a: unknown, b?: unknown): Promise<unknown>
  sleep(name: string, ms: number): Promise<void>
  ask(options: { name: string; message: string; schema: unknown }): Promise<unknown>
} {
  // A rejection handler, not an async wrapper: a step's promise chain is its hot path.
  const { journal, stop, failed } = site
  return {
    do: (name, a, b) => {
      const step = async () => {
        const begun = journal.begin(name, a, b)
        if (begun.guarded) return site.guarded(name, begun.options, begun.fn)
        return runStep(journal, name, begun.policy, begun.fn, stop)
      }
      return step().catch(failed)
    },
    sleep: (name, ms) => site.sleep(name, ms).catch(failed),
    ask: (options) => site.ask(options).catch(failed),
  }
}

/** How a run stops a step: its signal, and whether an error is the run's stop rather than the step's failure. */
export interface StepStop {
  readonly signal: AbortSignal
  isStop(error: unknown): boolean
}

/** How a failed attempt ended: what `fn` threw, and whether another attempt follows. */
export interface FailedAttempt {
  readonly error: unknown
  readonly timedOut: boolean
  readonly final: boolean
  readonly failure: RecordedFailure
}

/**
 * One `step.do`, the same in a session and in plain `chat()`: look the step up in the
 * journal, then attempt it until a value or a final failure. The rules:
 *
 * - a step the journal holds returns its value, and `fn` does not run;
 * - each attempt is opened in the journal first (the lease bound, a logged start);
 * - a value is recorded before the step resolves, with the recorded copy;
 * - a stop of the run (its signal, or its own failure) is neither a value nor a failure:
 *   nothing is recorded or retried, and the stop passes on;
 * - a failure is recorded; the last one (no attempts left, `NonRetryableError`, `isFinal`)
 *   fails the step with what `fn` threw (a `StepFailedError` for a timed-out attempt);
 *   otherwise the next attempt waits for its retry.
 */
export async function runStep(
  journal: StepJournal,
  name: string,
  policy: StepPolicy,
  fn: (context: StepRunContext) => unknown,
  stop: StepStop,
): Promise<unknown> {
  const found = await journal.lookup(name, policy)
  if (found.found) return found.value
  for (let attempt = found.attempt; ; attempt++) {
    const result = await attemptStep(journal, name, policy, fn, stop, attempt)
    if (!result.failed) return result.value
    if (result.failed.final) throw lastAttemptError(name, attempt, result.failed)
    await journal.waitRetry(name, attempt, policy, result.failed.failure)
  }
}

async function attemptStep(
  journal: StepJournal,
  name: string,
  policy: StepPolicy,
  fn: (context: StepRunContext) => unknown,
  stop: StepStop,
  attempt: number,
): Promise<{ value: unknown; failed?: undefined } | { failed: FailedAttempt }> {
  const opened = await journal.open(name, attempt, policy)
  try {
    const context = { idempotencyKey: journal.keyOf(name), attempt }
    const outcome = await opened.run(() => runAttempt(fn, context, stop.signal, policy.timeoutMs))
    if (outcome.ok) {
      const value = await opened.recordValue(outcome.value)
      opened.close()
      return { value }
    }
    const { error, timedOut } = outcome
    if (stop.signal.aborted || stop.isStop(error)) {
      opened.stopped()
      throw error
    }
    const final = isFinalFailure(policy, error, attempt)
    const failure = await opened.recordFailure(error, timedOut, final)
    opened.close()
    return { failed: { error, timedOut, final, failure } }
  } catch (error) {
    opened.close(error)
    throw error
  }
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

/**
 * The journal of plain `chat()`: nothing survives the process, so no step is found, an
 * attempt checks only that its call still lives, a value is a JSON copy, a failure is
 * kept nowhere, and a retry waits in the process.
 */
export function plainJournal(
  toolCallId: string,
  toolName: string,
  signal: AbortSignal,
  life: { readonly ended: boolean },
  checkValue: (name: string, value: unknown) => void,
): StepJournal {
  // A call's life ends when its execute settles, in plain chat() too: a dangling step is a bug.
  const live = () => {
    if (life.ended) throw toolCallSettled('step.do', toolCallId, toolName)
  }
  const recorded: RecordedFailure = {}
  return {
    keyOf: (name) => `plain:${toolCallId}:${name}`,
    lookup: async () => ({ found: false, attempt: 1 }),
    open: async (name) => ({
      run: (work) => work(),
      recordValue: async (value) => {
        checkValue(name, value)
        return jsonCopy(value)
      },
      recordFailure: async () => recorded,
      stopped: () => {},
      close: () => {},
    }),
    waitRetry: async (_name, attempt, policy) => {
      await waitFor(retryDelay(policy, attempt), signal, () => signal.reason)
      live()
    },
  }
}

/** How one attempt ended. `timedOut`: the step's `timeoutMs` passed first; `fn` may still be running. */
export type AttemptOutcome = { ok: true; value: unknown } | { ok: false; error: unknown; timedOut: boolean }

/**
 * Runs one attempt of `fn` with its own signal: aborted when `signal` (the tool call's)
 * aborts, and at `timeoutMs`. A timeout ends the attempt at once, whether `fn` honours
 * its signal or not; what `fn` does later is ignored. A stop of the call only aborts the
 * signal: the attempt still ends when `fn` does, as a step in flight finishes on a hand-off.
 */
export function runAttempt<C extends object>(
  fn: (context: C & { signal: AbortSignal }) => unknown,
  context: C,
  signal: AbortSignal,
  timeoutMs: number | undefined,
): Promise<AttemptOutcome> {
  // Without a time limit the attempt's signal is the call's own: nothing else aborts it,
  // and a step costs no controller and listener of its own.
  if (timeoutMs === undefined) {
    return new Promise((run) => run(fn({ ...context, signal }))).then(
      (value): AttemptOutcome => ({ ok: true, value }),
      (error: unknown): AttemptOutcome => ({ ok: false, error, timedOut: false }),
    )
  }
  const controller = new AbortController()
  const onStop = () => controller.abort(signal.reason)
  if (signal.aborted) onStop()
  else signal.addEventListener('abort', onStop, { once: true })
  return new Promise<AttemptOutcome>((resolve) => {
    const timer = setTimeout(() => {
      const reason = timeoutError(timeoutMs)
      controller.abort(reason)
      resolve({ ok: false, error: reason, timedOut: true })
    }, timeoutMs)
    const settle = (outcome: AttemptOutcome) => {
      clearTimeout(timer)
      signal.removeEventListener('abort', onStop)
      resolve(outcome)
    }
    // A synchronous throw is a failed attempt too.
    new Promise((run) => run(fn({ ...context, signal: controller.signal }))).then(
      (value) => settle({ ok: true, value }),
      (error: unknown) => settle({ ok: false, error, timedOut: false }),
    )
  })
}

/** The reason an attempt's signal aborts with at its timeout, as `AbortSignal.timeout` makes it. */
function timeoutError(timeoutMs: number): Error {
  return new DOMException(
    `The attempt timed out after ${timeoutMs} ms (the step's timeoutMs); its side effect may still have happened.`,
    'TimeoutError',
  )
}
