import type { JsonObject, JsonValue } from '../json/json-types.js'
import type { RollbackRecord, StepIntentRecord } from './outcome-records.js'

export type { RollbackRecord, StepIntentRecord } from './outcome-records.js'

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

/** A finished step of a tool call. `value` is absent for a step that returned nothing. */
export interface StepRecord extends JsonObject {
  type: 'harness.step'
  toolCallId: string
  name: string
}

/**
 * An attempt of a `step.do` failed (its `fn` threw or timed out). The log keeps every
 * failed attempt, so after a crash the attempts go on from the count here, and a step
 * whose failure was `final` stays failed: a later run throws the same error without
 * calling `fn`. A failure that is not final has `retryAt`, when the next attempt is due
 * (a field that is absent on a final failure).
 */
export interface StepFailedRecord extends JsonObject {
  type: 'harness.step.failed'
  toolCallId: string
  name: string
  /** 1 for the first attempt. */
  attempt: number
  /** What the attempt threw (its name and message), with the session's secrets replaced. */
  error: string
  /** True when the attempt timed out (the step's `timeoutMs`). */
  timedOut: boolean
  /** True when no attempt follows: the attempts ran out, or the error was final. */
  final: boolean
  at: number
}

/**
 * An attempt of a `step.do` with retries (`attempts` > 1) begins: logged before its fn
 * runs, so an attempt cut by a crash still counts against the budget. A later run goes on
 * with the next attempt, and a step whose last attempt was cut fails for good. A step
 * without retries logs no start (it costs one write).
 */
export interface StepStartedRecord extends JsonObject {
  type: 'harness.step.started'
  toolCallId: string
  name: string
  /** 1 for the first attempt. */
  attempt: number
  at: number
}

/** A durable sleep began: the wake time is kept across crashes. */
export interface SleepRecord extends JsonObject {
  type: 'harness.sleep'
  toolCallId: string
  name: string
  wakeAt: number
}

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

/**
 * A call of a tool with `needsApproval` waits for a person to approve or deny it. It is
 * logged with the assistant message that made the call (or before the call would run),
 * so after a crash the call still waits: it is neither run nor cut. The approval's id on
 * the stream is TanStack AI's: `approval_${toolCallId}`.
 */
export interface ApprovalRequestedRecord extends JsonObject {
  type: 'harness.approval.requested'
  toolCallId: string
  toolName: string
  at: number
}

/**
 * A person's decision on an approval (`host.approve`). Approved, the call runs; denied,
 * the model gets TanStack AI's denial result (`{ error: 'User declined tool execution' }`)
 * and the tool does not run. A call takes one decision.
 *
 * `reason` (absent when none was given) is the person's note, free of the session's secrets.
 */
export interface ApprovalDecidedRecord extends JsonObject {
  type: 'harness.approval.decided'
  toolCallId: string
  approved: boolean
  at: number
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
