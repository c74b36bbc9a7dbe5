/**
 * @tanstack/ai-harness — durable tools and sessions for TanStack AI, on any store.
 *
 * The root entry is the user API: tools, harnesses, hosts, workers and their errors. What
 * a session's log holds and how it is folded is in `@tanstack/ai-harness/log`; the store
 * contract and its plumbing in `@tanstack/ai-harness/store`.
 * @packageDocumentation
 */
export {
  durableTool,
  type DurableTool,
  type DurableToolContext,
  type DurableToolOptions,
  type Step,
  type StepRunContext,
} from './runtime/durable-tool.js'
export { NonRetryableError, type StepOptions } from './runtime/step-retry.js'
export { StepFailedError } from './runtime/runtime-errors.js'
export { agentTool, type AgentToolOptions } from './runtime/agent-tool.js'
export {
  defineHarness,
  type Harness,
  type HarnessOptions,
  type ToolResultHook,
  type AfterToolCallHook,
} from './runtime/harness.js'
export { createHost, type Host, type HostOptions, type OpenOptions } from './runtime/host.js'
export type { Session, TurnInput } from './runtime/session.js'
export type { SessionStatus } from './runtime/session-status.js'
export { createWorker, type Worker, type WorkerOptions } from './runtime/worker.js'
export { HARNESS_EVENTS } from './runtime/event-names.js'
export { HarnessError, isHarnessError } from './contract/errors.js'
export type { HarnessStore } from './contract/types.js'
