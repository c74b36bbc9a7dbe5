/**
 * `@tanstack/ai-harness/http` — an HTTP handler for the people who look after sessions:
 * list them, read a timeline, answer questions, approve, cancel, and watch records arrive.
 * Web-standard `Request → Response`, so it runs on every runtime; `toNodeListener` from
 * `@tanstack/ai-harness/http/node` mounts it on `node:http`.
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
export { type ChatRoute, type ChatRouteOptions, createChatRoute } from './chat-route.js'
