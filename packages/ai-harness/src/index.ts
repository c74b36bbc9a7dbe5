/**
 * @tanstack/ai-harness — durable tools and sessions for TanStack AI, on any store.
 * @packageDocumentation
 */
export * from './contract/index.js'
export * from './json/json-types.js'
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
  durableTool,
  type DurableTool,
  type DurableToolContext,
  type DurableToolOptions,
  type DurableExecute,
  type Step,
  type StepRunContext,
  type AskOptions,
  type AppRecord,
  type AppendRecords,
  type ReplayPolicy,
  type JsonStepGuard,
  MAX_STEP_NAME_BYTES,
} from './runtime/durable-tool.js'
export {
  defineHarness,
  DEFAULT_CUT_TOOL_ERROR,
  type Harness,
  type HarnessOptions,
  type AfterToolCallHook,
  type ToolCallOutcome,
} from './runtime/harness.js'
export {
  createHost,
  type Host,
  type HostOptions,
  type OpenOptions,
  type AnswerOptions,
  type SubmitOptions,
  type SubmitResult,
} from './runtime/host.js'
export type { TimingOptions } from './runtime/timings.js'
export type { Session, SessionStatus, TurnInput } from './runtime/session.js'
export { createWorker, type Worker, type WorkerOptions, type PollResult } from './runtime/worker.js'
export { HARNESS_EVENTS } from './runtime/event-names.js'
export { ParkSignal } from './runtime/park.js'
export { agentTool, childSessionId, type AgentTool, type AgentToolOptions } from './runtime/agent-tool.js'
export { StepError, StepFailedError, RecordError } from './runtime/runtime-errors.js'
export { NonRetryableError, type StepOptions } from './runtime/step-retry.js'
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
export * from './runtime/records.js'
export {
  foldLog,
  readAndFold,
  questionId,
  approvalId,
  openWaits,
  type SessionState,
  type StoredStep,
  type ApprovalState,
  type OpenWaits,
  type OpenQuestion,
  type OpenApproval,
} from './runtime/session-fold.js'
export type { ApproveOptions } from './runtime/approve-call.js'
export { DENIED_TOOL_ERROR } from './runtime/tool-call.js'
