import type { JsonObject, JsonValue } from '../json/json-types.js'
import type { ApprovalDecidedRecord, ApprovalRequestedRecord } from './approval-records.js'
import type { AnswerRecord, AnswerRejectedRecord, AskRecord } from './ask-records.js'
import type { RollbackRecord, StepIntentRecord } from './outcome-records.js'
import type { SleepRecord } from './sleep-records.js'
import type { StepFailedRecord, StepRecord, StepStartedRecord } from './step-records.js'

// A feature's records live in its own module, beside their fold cases.
export type { ApprovalDecidedRecord, ApprovalRequestedRecord } from './approval-records.js'
export type { AnswerRecord, AnswerRejectedRecord, AskRecord } from './ask-records.js'
export type { RollbackRecord, StepIntentRecord } from './outcome-records.js'
export type { SleepRecord } from './sleep-records.js'
export type { StepFailedRecord, StepRecord, StepStartedRecord } from './step-records.js'

/**
 * The records the harness writes to a session log. Every type begins with
 * `harness.`; apps add their own types through `append` and read them back with
 * `readRecords`. Together they are enough to rebuild the conversation and to know,
 * after a crash, exactly which tool calls finished and which steps are stored.
 */

/**
 * A tool call as the model made it; `arguments` is the JSON text the model sent.
 *
 * Two fields appear when they apply (JSON objects have no `undefined`, so they are not
 * declared here):
 * - `modelId` (string): the id the model gave, when the call was renamed because the
 *   model had used that id before in the session;
 * - `replay` (`'safe'` or `'never'`): what a crash does to the call, from the tool the run
 *   had under this name (also a tool a middleware added); absent when it had none.
 */
export interface LoggedToolCall extends JsonObject {
  /**
   * The call's id in the session: the model's id, unless the model used that id before
   * in this session (an earlier turn, or earlier in the same batch). Then it is
   * `${modelId}-${n}`, with n the smallest number from 2 up that no call of the session has.
   */
  id: string
  name: string
  arguments: string
}

/** A message of the conversation, in the JSON form the log keeps. */
export interface LoggedMessage extends JsonObject {
  role: 'user' | 'assistant' | 'tool'
  content: JsonValue
}

/** The session was created for this harness. Always seq 1. */
export interface SessionOpenedRecord extends JsonObject {
  type: 'harness.session.opened'
  harness: string
  at: number
  /** For the session of an agent tool: the call that runs it, `null` otherwise. */
  parent: { sessionId: string; toolCallId: string } | null
}

/**
 * A turn began with these new messages (the user's prompt), driven by `host` under lease `fence`.
 *
 * When the run was traced (OpenTelemetry, see the README's Tracing), `trace` holds the
 * turn span's context (`{ traceId, spanId, flags }`), so the spans of a run after a crash
 * or a wait join the same trace; absent otherwise.
 *
 * When the turn runs a prompt submitted with `host.submit`, `input` holds its
 * `{ inputId, inboxSeq }`: its id and its seq in the session's inbox (every submitted
 * prompt up to that seq has been taken); absent otherwise.
 */
export interface TurnStartedRecord extends JsonObject {
  type: 'harness.turn.started'
  turnId: string
  messages: LoggedMessage[]
  at: number
  host: string
  /** The lease fence of the driving host; null on a store without leases. */
  fence: number | null
}

/**
 * A host took over an open turn (after a crash, a wait, a hand-off). With the
 * `host` and `fence` of turn.started, the log tells who drove each stretch.
 */
export interface TurnResumedRecord extends JsonObject {
  type: 'harness.turn.resumed'
  turnId: string
  at: number
  host: string
  fence: number | null
}

/**
 * What the model said. When it has tool calls, this record is in the log before any
 * of them runs, so tool call ids (and so idempotency keys) survive a crash.
 */
export interface AssistantRecord extends JsonObject {
  type: 'harness.assistant'
  turnId: string
  text: string
  toolCalls: LoggedToolCall[]
}

/**
 * A tool call stopped on purpose to wait (a long sleep, a question, an approval, a child
 * session that waits for a person; a step's retry whose delay is longer than `parkAfterMs`
 * parks as a sleep until its `retryAt`). It is not cut: it runs again when the wait is over,
 * whatever its replay policy, and the later calls of its batch (`notStarted`) run then too.
 */
export interface ParkedRecord extends JsonObject {
  type: 'harness.parked'
  toolCallId: string
  reason: 'sleep' | 'ask' | 'agent' | 'approval'
  /** For a sleep: when to wake. */
  until: number | null
  notStarted: string[]
}

/** The result of one tool call, as the model saw it, with the session's secrets removed. */
export interface ToolResultRecord extends JsonObject {
  type: 'harness.tool.result'
  toolCallId: string
  toolName: string
  ok: boolean
  result: JsonValue
  /** Set when the harness settled a call cut by a crash instead of running it. */
  cut: boolean
}

/**
 * A tool read the secret `name` for the first time in this session. The value is never
 * logged; a host that opens the session again resolves the name, so it knows the secret
 * before the model can repeat it.
 */
export interface SecretUsedRecord extends JsonObject {
  type: 'harness.secret.used'
  name: string
}

/** The turn ended: the model answered without asking for more tools. */
export interface TurnFinishedRecord extends JsonObject {
  type: 'harness.turn.finished'
  turnId: string
  at: number
}

/** The turn was cancelled by the user; it is not resumed. */
export interface TurnCancelledRecord extends JsonObject {
  type: 'harness.turn.cancelled'
  turnId: string
  at: number
  reason: string
}

export type HarnessRecord =
  | SessionOpenedRecord
  | SleepRecord
  | AskRecord
  | AnswerRecord
  | AnswerRejectedRecord
  | ApprovalRequestedRecord
  | ApprovalDecidedRecord
  | ParkedRecord
  | TurnStartedRecord
  | TurnResumedRecord
  | AssistantRecord
  | StepRecord
  | StepFailedRecord
  | StepStartedRecord
  | ToolResultRecord
  | TurnFinishedRecord
  | TurnCancelledRecord
  | SecretUsedRecord
  | StepIntentRecord
  | RollbackRecord

/**
 * A prompt submitted to a session from any host (`host.submit`), in the session's inbox
 * (a log of its own, so a submit never races the driving host for the session log's next
 * seq). `inputId` is the client's: the inbox holds each id once.
 */
export interface InputRecord extends JsonObject {
  type: 'harness.input'
  inputId: string
  messages: LoggedMessage[]
  at: number
}

/** The prefix of every record type the harness owns. */
export const RESERVED_PREFIX = 'harness.'

export const isHarnessRecordType = (type: string) => type.startsWith(RESERVED_PREFIX)
