/**
 * `@tanstack/ai-harness/http` — an HTTP handler for the people who look after sessions:
 * list them, read a timeline, answer questions, approve, cancel, and watch records arrive.
 * Web-standard `Request → Response`; `toNodeListener` mounts it on `node:http`.
 * @packageDocumentation
 */
export {
  type Authorize,
  createHarnessHandler,
  type HandlerErrorBody,
  type HandlerErrorCode,
  type HarnessAction,
  type HarnessHandlerOptions,
  type OpenApprovalView,
  type OpenQuestion,
  openQuestions,
  type SessionView,
} from './handler.js'
export { toNodeListener } from './node.js'
