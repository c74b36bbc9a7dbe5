import type { JsonObject } from '../json/json-types.js'

/**
 * The records of steps whose side effect cannot be made idempotent (`verify`, `once`,
 * `undo`), and how a session's fold keeps them. Only steps with these options write
 * them: a plain step costs its one `harness.step` record, as before.
 */

/**
 * A step with `verify` or `once` is about to run its `fn` (attempt `attempt`): logged
 * before `fn` starts. A later run that finds an intent with neither a value nor a failure
 * of that attempt knows the effect may have happened: it asks `verify`, or (`once`)
 * throws `STEP_OUTCOME_UNKNOWN`, instead of running `fn` blindly.
 */
export interface StepIntentRecord extends JsonObject {
  type: 'harness.step.intent'
  toolCallId: string
  name: string
  /** 1 for the first attempt, as `StepRunContext.attempt`. */
  attempt: number
  at: number
}

/**
 * A call that ended in a final failure runs the compensations (`undo`) of its finished
 * steps: logged before the first one runs, so a run after a crash goes on rolling back
 * (its tool's later steps do not run again) and gives the model the same error. A cancel
 * logs one for an agent call too, before its child session rolls anything back: a run
 * after a crash in the child's rollback then finishes the cancel.
 */
export interface RollbackRecord extends JsonObject {
  type: 'harness.rollback'
  toolCallId: string
  /** Why the call failed (its error's message), with the session's secrets removed. */
  error: string
  at: number
  /**
   * The cancel of the open turn that started the rollback (null for a failure of the call):
   * a run after a crash goes on with the cancel (the rest of the rollback, then
   * `harness.turn.cancelled` with `reason`), and the turn does not run on. Logs written
   * before it existed have no such field: their rollbacks are failures.
   */
  cancel: CancelMark | null
}

/** The cancel that started a rollback: its turn, and the reason the turn ends with. */
export interface CancelMark extends JsonObject {
  turnId: string
  reason: string
}

/** An intent of a step, as the fold keeps it: the last one logged, and how many there were. */
export interface LoggedIntent {
  readonly attempt: number
  readonly at: number
  /** How many intents the step logged (1 for the first): each unknown outcome gets its own question. */
  readonly count: number
}

/** What the fold knows of intents and rollbacks, by tool call id (then step name). */
export interface OutcomeState {
  readonly intents: Map<string, Map<string, LoggedIntent>>
  readonly rollbacks: Map<string, RollbackRecord>
  /**
   * Calls whose `execute` a cancel runs again only to find their compensations (not from
   * the log: this host's own, while it cancels): a step, sleep or question they had not
   * finished throws instead of running.
   */
  readonly probing: Set<string>
  /**
   * The last cancel that logged a rollback (its turn and reason). While that turn is open,
   * a crash cut the cancel: a run after it finishes the cancel. One slot, so memory stays
   * flat however many turns were cancelled.
   */
  cancelling: { readonly turnId: string; readonly reason: string } | undefined
}

export function emptyOutcomeState(): OutcomeState {
  return { intents: new Map(), rollbacks: new Map(), probing: new Set(), cancelling: undefined }
}

/** Whether the call goes on rolling back (a rollback in the log, or a cancel that looks for its compensations). */
export function rollingBack(state: OutcomeState, toolCallId: string): boolean {
  return state.rollbacks.has(toolCallId) || state.probing.has(toolCallId)
}

/** Applies an intent or rollback record; any other record changes nothing here. */
export function applyOutcomeRecord(state: OutcomeState, record: JsonObject & { type: string }): void {
  if (record.type === 'harness.step.intent') {
    const toolCallId = String(record.toolCallId)
    const name = String(record.name)
    const intents = state.intents.get(toolCallId) ?? new Map<string, LoggedIntent>()
    const count = (intents.get(name)?.count ?? 0) + 1
    intents.set(name, { attempt: Number(record.attempt), at: Number(record.at), count })
    state.intents.set(toolCallId, intents)
  } else if (record.type === 'harness.rollback') {
    const rollback = record as RollbackRecord
    if (!state.rollbacks.has(rollback.toolCallId)) state.rollbacks.set(rollback.toolCallId, rollback)
    const cancel = rollback.cancel as CancelMark | null | undefined
    if (typeof cancel?.turnId === 'string' && typeof cancel.reason === 'string')
      state.cancelling = { turnId: cancel.turnId, reason: cancel.reason }
  }
}

/** A settled call never reads its intents or rollback again: the fold forgets them. */
export function forgetCallOutcomes(state: OutcomeState, toolCallId: string): void {
  state.intents.delete(toolCallId)
  state.rollbacks.delete(toolCallId)
}
