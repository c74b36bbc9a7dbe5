import type { HarnessErrorCode } from '../contract/errors.js'
import { isHarnessError } from '../contract/errors.js'

/** Codes of refusals that only the handler gives, besides the harness's own. */
export type HandlerErrorCode =
  | HarnessErrorCode
  | 'FORBIDDEN'
  | 'ROUTE_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'SESSION_NOT_FOUND'
  | 'BODY_INVALID'
  | 'BODY_TOO_LARGE'
  | 'INTERNAL_ERROR'

/** The JSON body of every refusal: a stable code and what to do. Never a stack trace, never a driver's message. */
export interface HandlerErrorBody {
  code: HandlerErrorCode
  message: string
}

const STATUS: Partial<Record<HandlerErrorCode, number>> = {
  INVALID_ARGUMENT: 400,
  BODY_INVALID: 400,
  RECORD_NOT_JSON: 400,
  RECORD_SECRET: 400,
  FORBIDDEN: 403,
  ROUTE_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  QUESTION_NOT_FOUND: 404,
  APPROVAL_NOT_FOUND: 404,
  ALREADY_DECIDED: 409,
  METHOD_NOT_ALLOWED: 405,
  ALREADY_ANSWERED: 409,
  LEASE_HELD: 409,
  SESSION_BUSY: 409,
  LOG_CONFLICT: 409,
  BODY_TOO_LARGE: 413,
  ANSWER_INVALID: 422,
  CAPABILITY_MISSING: 501,
  INTERNAL_ERROR: 500,
  SESSION_CORRUPT: 500,
  STORE_UNAVAILABLE: 503,
}

/**
 * What a 5xx says, whatever the error's own message was: a store's message may name its
 * driver, host and port ("connect ECONNREFUSED 127.0.0.1:5432"), which is for the
 * server's log (`onError`), not for whoever sent the request.
 */
const SERVER_MESSAGES: Partial<Record<HandlerErrorCode, string>> = {
  STORE_UNAVAILABLE: 'The store is unavailable right now; try again later. The server log has the details.',
  SESSION_CORRUPT: "The session's log cannot be read as it is; the server log has the details.",
  INTERNAL_ERROR: 'The server failed while handling this request; its log has the details.',
}

/** A refusal the handler decides itself (its message is its own, safe to show). */
export class Refusal extends Error {
  constructor(
    readonly code: HandlerErrorCode,
    message: string,
  ) {
    super(message)
  }
}

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  })

export const refuse = (code: HandlerErrorCode, message: string, headers?: Record<string, string>): Response =>
  json({ code, message } satisfies HandlerErrorBody, STATUS[code] ?? 400, headers)

/**
 * The response for an error thrown while handling a request: the handler's own refusals
 * and the harness's 4xx as they are; every 5xx with a fixed message (CAPABILITY_MISSING's
 * is the harness's own advice), the error itself told to `onError` only.
 */
export function errorResponse(error: unknown, request: Request, onError?: (error: unknown, request: Request) => void): Response {
  if (error instanceof Refusal) return refuse(error.code, error.message)
  const code: HandlerErrorCode = isHarnessError(error) ? error.code : 'INTERNAL_ERROR'
  const status = STATUS[code] ?? 400
  if (status < 500) return json({ code, message: (error as Error).message } satisfies HandlerErrorBody, status)
  onError?.(error, request)
  const message = code === 'CAPABILITY_MISSING' ? (error as Error).message : (SERVER_MESSAGES[code] ?? SERVER_MESSAGES.INTERNAL_ERROR!)
  return json({ code, message } satisfies HandlerErrorBody, status)
}
