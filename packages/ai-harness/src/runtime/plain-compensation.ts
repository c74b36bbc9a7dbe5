import { CallRolledBackError, type Registered, type Undone, type UndoFn, undoStepName } from './rollback-error.js'
import { failureText, shortFailureText } from './step-retry.js'

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
