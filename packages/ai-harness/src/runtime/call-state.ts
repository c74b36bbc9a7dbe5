import type { JsonValue } from '../json/json-types.js'
import type { ApprovalJournal } from './approval-records.js'
import type { AskJournal } from './ask-records.js'
import type { LoggedToolCall, ParkedRecord, ToolResultRecord } from './records.js'
import { forgetSleeps, type SleepJournal } from './sleep-records.js'
import { forgetSteps, type StepJournal } from './step-records.js'

/**
 * One tool call's journal: everything the log says about it, folded in one place. Each
 * feature owns its part (`StepJournal` in step-records.ts, `SleepJournal`, `AskJournal`,
 * `ApprovalJournal`) and the fold cases that write it; this module holds what every call
 * has (the call, its wait, its result) and what settling a call does.
 */
export interface CallState extends StepJournal, SleepJournal, AskJournal, ApprovalJournal {
  readonly id: string
  /** The call as the model made it (`harness.assistant`), with its turn; undefined for an id only other records named. */
  call: TurnCall | undefined
  /** The call waits on purpose (`harness.parked`); cleared when it settles or its turn ends. */
  parked: ParkedRecord | undefined
  /** The call had not started when its batch parked; cleared when it settles or its turn ends. */
  notStarted: boolean
  /** Its logged result (`harness.tool.result`), once settled. */
  result: ToolResultRecord | undefined
  /** Its turn ended without a result: the fold closed it with a synthetic tool message. */
  closed: boolean
}

/** A tool call as the model made it, with the turn that made it. */
export type TurnCall = LoggedToolCall & { turnId: string }

/** Maps of a journal as readers outside the fold see them: nothing to set or delete. */
type ReadonlyPart<T> = T extends Map<infer K, infer V> ? ReadonlyMap<K, Readonly<V>> : T extends object ? Readonly<T> : T

/** A call's journal as everything outside the fold reads it. */
export type CallView = { readonly [K in keyof CallState]: ReadonlyPart<CallState[K]> }

function newCall(id: string): CallState {
  return {
    id,
    call: undefined,
    steps: undefined,
    failures: undefined,
    starts: undefined,
    sleeps: undefined,
    questions: undefined,
    approval: undefined,
    parked: undefined,
    notStarted: false,
    result: undefined,
    closed: false,
  }
}

/**
 * The call settled. It never reads its steps, sleeps or wait again (its logged result
 * answers), so they are dropped: memory stays flat over long sessions. Its call, questions
 * and approval stay: the session's views list them.
 */
export function settleCall(call: CallState, result: ToolResultRecord): void {
  call.result = result
  forgetSteps(call)
  forgetSleeps(call)
  call.parked = undefined
  call.notStarted = false
}

/** The journals of a session's calls, by call id, and what the fold keeps to update them without walking them all. */
export class Journals {
  readonly calls = new Map<string, CallState>()
  /** Journals with a park or a not-started mark (or that had one and settled since): a turn's end clears them. */
  readonly #waiting = new Set<CallState>()
  /** Journals with a decided approval: a take-over counts a run for each. */
  readonly #decided = new Set<CallState>()

  /** The journal `of` found last: a call's records come in a run (its steps, then its result), so most lookups are this one. */
  #last: CallState | undefined

  /** The journal of a call, begun by the first record that names it. */
  of(toolCallId: string): CallState {
    if (this.#last?.id === toolCallId) return this.#last
    let call = this.calls.get(toolCallId)
    if (!call) {
      call = newCall(toolCallId)
      this.calls.set(toolCallId, call)
    }
    this.#last = call
    return call
  }

  /** The journal of a call, if a record named it. */
  known(toolCallId: string): CallState | undefined {
    return this.calls.get(toolCallId)
  }

  /** A call now waits (a park, a not-started mark). */
  noteWait(call: CallState): void {
    this.#waiting.add(call)
  }

  /** The calls that may wait, in the order they began to. */
  waiting(): Iterable<CallState> {
    return this.#waiting
  }

  /** The turn ended: no call of it waits any more. */
  endWaits(): void {
    for (const call of this.#waiting) {
      call.parked = undefined
      call.notStarted = false
    }
    this.#waiting.clear()
  }

  /** A call's approval took its decision. */
  noteDecision(call: CallState): void {
    this.#decided.add(call)
  }

  /** The calls whose approval has a decision. */
  decided(): Iterable<CallState> {
    return this.#decided
  }
}

/** The text the model reads for a logged tool result (as `chat()` builds it). */
export function toolMessageContent(result: JsonValue): string {
  return typeof result === 'string' ? result : JSON.stringify(result)
}
