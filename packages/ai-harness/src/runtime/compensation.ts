import { HarnessError } from '../contract/errors.js'
import type { LogRecord } from '../contract/types.js'
import type { RollbackRecord } from './outcome-records.js'
import type { SessionRuntime } from './session-runtime.js'
import type { StepDoOptions, UndoContext } from './step-outcome-options.js'
import { failureText, shortFailureText } from './step-retry.js'
import { ownFailureIn } from './own-failures.js'

/**
 * Compensations (`step.do(name, { undo }, fn)`): when a tool call ends in a failure, the
 * `undo` of each of its finished steps runs, newest first. In a session the rollback is
 * durable: it is logged before the first compensation, each compensation is a step of its
 * own run at most once, and a run after a crash goes on where it stopped.
 */

type UndoFn = NonNullable<StepDoOptions['undo']>

/** A finished step with a compensation, in the order the steps finished. */
interface Registered {
  readonly name: string
  readonly value: unknown
  readonly undo: UndoFn
}

/** How one compensation ended. */
type Undone = { step: string; outcome: 'undone' } | { step: string; outcome: 'failed' | 'unknown'; why: string }

/** The step name of a compensation: a step of the same call, with its own idempotency key. */
export const undoStepName = (name: string) => `undo(${name})`

/**
 * The error the model gets for a call that was rolled back (code `CALL_ROLLED_BACK`): why
 * the call failed, and what each compensation did.
 */
export class CallRolledBackError extends HarnessError {
  /** Why the call failed: its error's message. */
  readonly reason: string
  /** The steps whose compensation ran, newest first. */
  readonly undone: readonly string[]
  /** The steps whose compensation failed, or was cut by a crash (it does not run again): a person must check them. */
  readonly notUndone: ReadonlyArray<{ step: string; why: string }>

  constructor(reason: string, results: readonly Undone[]) {
    const said = results.map((r) =>
      r.outcome === 'undone'
        ? `${JSON.stringify(r.step)} undone`
        : r.outcome === 'unknown'
          ? `${JSON.stringify(r.step)} may not be undone (its undo was cut by a crash and does not run again; check it)`
          : `${JSON.stringify(r.step)} not undone (its undo threw: ${r.why}; undo it by hand)`,
    )
    super('CALL_ROLLED_BACK', `${reason}${/[.!?]$/.test(reason) ? '' : '.'} The call was rolled back: ${said.join('; ')}.`)
    this.name = 'CallRolledBackError'
    this.reason = reason
    this.undone = results.filter((r) => r.outcome === 'undone').map((r) => r.step)
    this.notUndone = results.flatMap((r) => (r.outcome === 'undone' ? [] : [{ step: r.step, why: r.why }]))
  }
}

/** What a rollback needs of its tool call in a session (see `StepGuard`). */
export interface RollbackCall {
  readonly session: SessionRuntime
  readonly toolCallId: string
  readonly idPrefix: string
  readonly signal: AbortSignal
  write(records: LogRecord[]): Promise<void>
  /** Runs a compensation as a step of the call, at most once (`once: true`), past the rollback's own guard. */
  runStep(name: string, options: StepDoOptions, fn: (context: { idempotencyKey: string; signal: AbortSignal }) => unknown): Promise<unknown>
}

/** The compensations of one tool call in a session, and its durable rollback. */
export class Compensations {
  readonly #registered: Registered[] = []

  constructor(readonly call: RollbackCall) {}

  register(name: string, value: unknown, undo: UndoFn): void {
    this.#registered.push({ name, value, undo })
  }

  /** True once a rollback of this call is in the log: a run after a crash goes on rolling back. */
  get rollingBack(): boolean {
    return this.call.session.state.outcomes.rollbacks.has(this.call.toolCallId)
  }

  /**
   * Runs the call's `execute` (`run`); when it throws (or a resumed rollback is in the
   * log), rolls the finished steps back and throws a `CallRolledBackError`. A stop of the
   * run (`stopped`: a park, a lost lease, a cancel, the call's deadline) is no failure of
   * the call: nothing is undone.
   */
  async runCall<T>(run: () => Promise<T>, stopped: () => boolean): Promise<T> {
    let value: T
    try {
      value = await run()
    } catch (error) {
      if (ownFailureIn(this.call.session, error) || stopped() || (this.#registered.length === 0 && !this.rollingBack)) throw error
      throw await this.#rollBack(error)
    }
    // The tool caught the error of a resumed rollback and returned: the call still fails as it did.
    if (this.rollingBack && !stopped()) throw await this.#rollBack(undefined)
    return value
  }

  async #rollBack(error: unknown): Promise<CallRolledBackError> {
    const { session, toolCallId } = this.call
    let logged = session.state.outcomes.rollbacks.get(toolCallId)
    if (!logged) {
      logged = {
        type: 'harness.rollback',
        toolCallId,
        error: session.scanner.redactText(shortFailureText(failureText(error))),
        at: session.clock.now(),
      } satisfies RollbackRecord
      await this.call.write([logged])
    }
    const results: Undone[] = []
    for (const step of [...this.#registered].reverse()) {
      const context = { stepKey: `${this.call.idPrefix}${step.name}`, reason: logged.error }
      try {
        await this.call.runStep(undoStepName(step.name), { once: true }, async ({ idempotencyKey, signal }) => {
          await step.undo(step.value, { ...context, idempotencyKey, signal })
        })
        results.push({ step: step.name, outcome: 'undone' })
      } catch (caught) {
        // A stop of the run leaves the rest of the rollback to the run after it.
        if (ownFailureIn(session, caught) || this.call.signal.aborted) throw caught
        const unknown = (caught as { code?: unknown })?.code === 'STEP_OUTCOME_UNKNOWN'
        results.push({
          step: step.name,
          outcome: unknown ? 'unknown' : 'failed',
          why: unknown ? 'cut by a crash' : session.scanner.redactText(shortFailureText(failureText(caught), 500)),
        })
      }
    }
    return new CallRolledBackError(logged.error, results)
  }
}

/** The error a step throws in a call whose rollback a crash cut: the call's later steps do not run again. */
export function rollingBackError(name: string): HarnessError {
  return new HarnessError(
    'CALL_ROLLED_BACK',
    `Step ${JSON.stringify(name)} does not run: this call failed and is rolling back its finished steps (a run after a crash goes on with the rollback). Let the error pass; the model gets the call's error.`,
  )
}

/**
 * Compensations in plain `chat()`: no log, so nothing to resume. When `execute` throws,
 * each registered `undo` runs once, newest first, and the error says what was undone.
 */
export class PlainCompensations {
  readonly #registered: Registered[] = []

  constructor(
    readonly toolCallId: string,
    readonly signal: AbortSignal,
  ) {}

  register(name: string, value: unknown, undo: UndoFn): void {
    this.#registered.push({ name, value, undo })
  }

  /** Runs `execute`; when it throws and steps have compensations, runs them and throws a `CallRolledBackError`. */
  async runCall<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      if (this.#registered.length === 0 || this.signal.aborted) throw error
      const reason = shortFailureText(failureText(error))
      const results: Undone[] = []
      for (const step of [...this.#registered].reverse()) {
        const idempotencyKey = `plain:${this.toolCallId}:${undoStepName(step.name)}`
        const stepKey = `plain:${this.toolCallId}:${step.name}`
        try {
          await step.undo(step.value, { idempotencyKey, stepKey, reason, signal: this.signal })
          results.push({ step: step.name, outcome: 'undone' })
        } catch (caught) {
          results.push({ step: step.name, outcome: 'failed', why: shortFailureText(failureText(caught), 500) })
        }
      }
      throw new CallRolledBackError(reason, results)
    }
  }
}

export type { UndoContext }
