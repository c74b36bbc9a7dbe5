/**
 * `@tanstack/ai-harness/http` — an HTTP handler for the people who look after sessions:
 * list them, read a timeline, answer questions, approve, cancel, and watch records arrive.
 * Web-standard `Request → Response`, so it runs on every runtime; `toNodeListener` from
 * `@tanstack/ai-harness/http/node` mounts it on `node:http`.
 * @packageDocumentation
 */
export type { Authorize, HarnessAction, SessionScope } from './authorize.js'
export { createHarnessHandler, type HarnessHandlerOptions } from './handler.js'
export type { HandlerErrorBody, HandlerErrorCode } from './responses.js'
export type { SessionPage } from './session-listing.js'
export { type OpenApprovalView, type OpenQuestion, openQuestions, type SessionView } from './session-view.js'
export type { ChatHydration } from './chat-hydration.js'
export { type ChatRoute, type ChatRouteOptions, createChatRoute } from './chat-route.js'
