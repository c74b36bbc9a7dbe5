/**
 * @tanstack/ai-harness/log — what a session's log holds and how it is read: the record
 * types, the fold (`foldLog`, `readAndFold`) and its views (`openWaits`), the JSON and
 * secret helpers the log is kept with, and the secondary types of the user API (the
 * options of `host.answer`, `host.approve`, `host.submit`, a worker's poll, a tool's
 * context parts). The root entry keeps the user API only.
 * @packageDocumentation
 */
export * from './runtime/records.js'
export {
  foldLog,
  readAndFold,
  questionId,
  approvalId,
  type SessionState,
  type SessionFold,
  type CallView,
  type StoredStep,
  type ApprovalState,
  type OpenWaits,
  type OpenQuestion,
  type OpenApproval,
} from './runtime/session-fold.js'
export { openWaits } from './runtime/open-waits.js'
export { statusOf, type LogStatus } from './runtime/session-status.js'
export { childSessionId, type AgentTool } from './runtime/agent-tool.js'
export type { JsonObject, JsonPrimitive, JsonValue, IsJson } from './json/json-types.js'
export { findNonJson, jsonCopy, jsonBytes, jsonEqual, utf8Length, childPath, type NonJsonFinding } from './json/check-json.js'
export {
  SecretScanner,
  SECRET_MARKER,
  MIN_SECRET_LENGTH,
  type SecretFinding,
  type SecretScannerOptions,
  type KeepStructure,
} from './secrets/secret-scanner.js'
export {
  type DurableExecute,
  type AskOptions,
  type AppRecord,
  type AppendRecords,
  type ReplayPolicy,
  type JsonStepGuard,
  MAX_STEP_NAME_BYTES,
} from './runtime/durable-tool.js'
export { DEFAULT_CUT_TOOL_ERROR, type ToolCallOutcome } from './runtime/harness.js'
export type { AnswerOptions, SubmitOptions, SubmitResult } from './runtime/host.js'
export type { ApproveOptions } from './runtime/approve-call.js'
export type { PollResult } from './runtime/worker.js'
export type { TimingOptions } from './runtime/timings.js'
export type { Park, ParkReason, StopReason } from './runtime/run-stop.js'
export { StepError, RecordError } from './runtime/runtime-errors.js'
export { DENIED_TOOL_ERROR } from './runtime/approval-gate.js'
export {
  StepOutcomeUnknownError,
  type StepDoOptions,
  type StepOutcomeOptions,
  type UndoContext,
  type VerifyContext,
  type VerifyVerdict,
} from './runtime/step-outcome-options.js'
export { CallRolledBackError, undoStepName } from './runtime/rollback-error.js'
export { verifyQuestionName } from './runtime/step-outcome.js'
