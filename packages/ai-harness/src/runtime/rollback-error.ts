import { HarnessError } from '../contract/errors.js'
import type { StepDoOptions } from './step-outcome-options.js'

/** The compensation of a step (`step.do(name, { undo }, fn)`), as a call keeps it until it ends. */
export type UndoFn = NonNullable<StepDoOptions['undo']>

/** A finished step with a compensation, in the order the steps finished. */
export interface Registered {
  readonly name: string
  readonly value: unknown
  readonly undo: UndoFn
}

/** How one compensation ended. */
export type Undone = { step: string; outcome: 'undone' } | { step: string; outcome: 'failed' | 'unknown'; why: string }

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
