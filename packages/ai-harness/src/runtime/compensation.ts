import { HarnessError } from '../contract/errors.js'
import type { LogRecord } from '../contract/types.js'
import { type CancelMark, type RollbackRecord, rollingBack } from './outcome-records.js'
import { CallRolledBackError, type Registered, type Undone, type UndoFn, undoStepName } from './rollback-error.js'
import type { SessionRuntime } from './session-runtime.js'
import type { StepDoOptions } from './step-outcome-options.js'
import { failureText, shortFailureText } from './step-retry.js'

/**
 * Compensations (`step.do(name, { undo }, fn)`) in a session: when a tool call ends in a
 * failure, the `undo` of each of its finished steps runs, newest first. The rollback is
 * durable: it is logged before the first compensation, each compensation is a step of its
 * own run at most once, and a run after a crash goes on where it stopped. (Plain `chat()`:
 * plain-compensation.ts.)
 */

/** What a rollback needs of its tool call in a session (see `StepGuard`). */
export interface RollbackCall {
  readonly session: SessionRuntime
  readonly toolCallId: string
  readonly idPrefix: string
  readonly signal: AbortSignal
  /** True once the call met its stop (a park, the session's own failure): it is no failure of the call. */
  stopped(): boolean
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

  /** True once a rollback of this call is in the log (a run after a crash goes on rolling back), or while a cancel probes the call. */
  get rollingBack(): boolean {
    return rollingBack(this.call.session.state.outcomes, this.call.toolCallId)
  }

  /**
   * The call's session is cancelled while the call waits (or was cut): runs `execute`
   * again only to register the compensations of its finished steps (its first unfinished
   * step, sleep or question throws), then rolls them back. Resolves with the error the call
   * settles with, or undefined when it has nothing to undo (then nothing was written).
   * `cancel` goes into the rollback record: a run after a crash finishes the cancel.
   */
  async rollBackOnCancel(run: () => Promise<unknown>, reason: Error, cancel: CancelMark): Promise<CallRolledBackError | undefined> {
    const { outcomes } = this.call.session.state
    outcomes.probing.add(this.call.toolCallId)
    try {
      await run()
    } catch (error) {
      if (this.call.stopped()) throw error
    } finally {
      outcomes.probing.delete(this.call.toolCallId)
    }
    if (this.#registered.length === 0 && !outcomes.rollbacks.has(this.call.toolCallId)) return undefined
    return this.#rollBack(reason, cancel)
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
      if (this.call.stopped() || stopped() || (this.#registered.length === 0 && !this.rollingBack)) throw error
      throw await this.#rollBack(error)
    }
    // The tool caught the error of a resumed rollback and returned: the call still fails as it did.
    if (this.rollingBack && !stopped()) throw await this.#rollBack(undefined)
    return value
  }

  async #rollBack(error: unknown, cancel?: CancelMark): Promise<CallRolledBackError> {
    const { session, toolCallId } = this.call
    const { outcomes } = session.state
    let logged = outcomes.rollbacks.get(toolCallId)
    // A cancel of a call whose failure began a rollback logs one more (the first keeps the error): a crash then finishes the cancel.
    const unmarked = cancel !== undefined && outcomes.cancelling?.turnId !== cancel.turnId
    if (!logged || unmarked) {
      const record: RollbackRecord = {
        type: 'harness.rollback',
        toolCallId,
        error: logged?.error ?? session.scanner.redactText(shortFailureText(failureText(error))),
        at: session.clock.now(),
        cancel: cancel ? { ...cancel } : null,
      }
      await this.call.write([record])
      logged ??= record
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
        if (this.call.stopped() || this.call.signal.aborted) throw caught
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
