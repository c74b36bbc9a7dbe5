import type { JsonObject, JsonValue } from '../json/json-types.js'
import type { ParkWait } from './park-wait.js'

/**
 * The ask feature's part of the log: a question for a person, its answer, and an answer the
 * tool's own schema refused; how the fold keeps them in a call's journal. Questions outlive
 * their call's result (a view of the session lists what was asked), so a settle keeps them.
 */

/** A question for a person, with the JSON Schema its answer must match. */
export interface AskRecord extends JsonObject {
  type: 'harness.ask'
  toolCallId: string
  name: string
  message: string
  schema: JsonObject
}

/** The answer to a question, validated against its schema. */
export interface AnswerRecord extends JsonObject {
  type: 'harness.answer'
  toolCallId: string
  name: string
  answer: JsonValue
  at: number
}

/**
 * A logged answer failed the tool's own schema (a check the JSON Schema cannot express,
 * such as a zod `.refine`). The question is open again: the next answer is taken.
 */
export interface AnswerRejectedRecord extends JsonObject {
  type: 'harness.answer.rejected'
  toolCallId: string
  name: string
  /** Why the tool's schema refused the answer, with the session's secrets removed. */
  reason: string
  at: number
}

/** A question of the session and where it stands. */
export interface QuestionState {
  ask: AskRecord
  /** The answer the question took; undefined while it is open. */
  answer: AnswerRecord | undefined
  /** The last answer the tool's own schema refused, if any. */
  rejected: AnswerRejectedRecord | undefined
}

/** The id of a question: unique in its session. */
export const questionId = (toolCallId: string, name: string) => `${toolCallId}:${name}`

/**
 * A call's questions by name (`ask.name`); absent until it asks. An answer the tool's own
 * schema refused is not an answer: the question is open again, and `rejected` says why.
 */
export interface AskJournal {
  questions: Map<string, QuestionState> | undefined
}

export function foldAsk(call: AskJournal, ask: AskRecord): void {
  call.questions ??= new Map()
  call.questions.set(ask.name, { ask, answer: undefined, rejected: undefined })
}

export function foldAnswer(call: AskJournal | undefined, answer: AnswerRecord): void {
  const question = call?.questions?.get(answer.name)
  if (question) question.answer = answer
}

export function foldAnswerRejected(call: AskJournal | undefined, rejected: AnswerRejectedRecord): void {
  const question = call?.questions?.get(rejected.name)
  if (!question) return
  question.answer = undefined
  question.rejected = rejected
}

/** Whether the call has a question that took an answer (its wait is over). */
export function hasAnswer(call: { readonly questions: ReadonlyMap<string, Readonly<QuestionState>> | undefined } | undefined): boolean {
  for (const question of call?.questions?.values() ?? []) if (question.answer) return true
  return false
}

/** The ask feature's wakeup rule: a call that asked waits for a person until an answer is logged. */
export function askWait(call: Parameters<typeof hasAnswer>[0]): ParkWait {
  return { kind: 'person', open: !hasAnswer(call) }
}
