import { HarnessError } from '../contract/errors.js'
import { assertLogId } from '../contract/prepare-batch.js'
import type { Host } from '../runtime/host.js'
import { type Authorize, allowed, type HarnessAction } from './authorize.js'
import { watchSession } from './event-stream.js'
import { fields, readBody } from './request-input.js'
import { errorResponse, json, Refusal, refuse } from './responses.js'
import { listSessions } from './session-listing.js'
import { readSession } from './session-view.js'

export interface HarnessHandlerOptions {
  /** The host whose store the handler reads and whose sessions it answers and cancels. */
  host: Host
  /** Required: every request passes it first. Without it `createHarnessHandler` throws. */
  authorize: Authorize
  /** The path the handler is mounted under, e.g. `/api/harness`. Default `''`. */
  basePath?: string
  /** How often a server-sent event stream looks for new records. Default 500 ms. */
  pollMs?: number
  /** A stream ends after this long; the client reconnects from the last seq. Default 5 min. */
  maxStreamMs?: number
  /** Largest request body, in bytes. Default 1 MiB. */
  maxBodyBytes?: number
  /** Told about errors that are not the caller's fault (a 5xx), e.g. to log them. The response never shows them. */
  onError?: (error: unknown, request: Request) => void
}

/**
 * An HTTP handler for the people who look after sessions, on the web-standard
 * `Request → Response` (mount it in TanStack Start, Hono, Next, or `node:http` with
 * `toNodeListener`). Routes, under `basePath`:
 *
 * | route | action | |
 * | --- | --- | --- |
 * | `GET /sessions?after=&limit=&waiting=1` | `sessions.list` | ids in the caller's scope, paged; `waiting=1`: those waiting for a person |
 * | `GET /sessions/:id?after=&limit=` | `session.read` | the session's status, open questions and approvals, and one page of its records |
 * | `GET /sessions/:id/events?after=` | `session.watch` | server-sent events: each new record (`id` = its seq) |
 * | `POST /sessions/:id/answer` `{ questionId, answer }` | `session.answer` | answers a question |
 * | `POST /sessions/:id/approve` `{ toolCallId, approved, reason? }` | `session.approve` | approves or denies a tool call that waits for approval |
 * | `POST /sessions/:id/cancel` `{ reason? }` | `session.cancel` | ends the open turn as cancelled |
 *
 * Every request passes `authorize(request, action, sessionId)` before anything else,
 * even before its session id is checked. A refusal is JSON `{ code, message }` with a
 * 4xx (5xx only for the store or the server, with a fixed message), and writes nothing.
 * POST bodies must be `application/json` (so a cross-site form cannot post them without
 * a CORS preflight).
 */
export function createHarnessHandler(options: HarnessHandlerOptions): (request: Request) => Promise<Response> {
  const { host, authorize } = checkOptions(options)
  const base = (options.basePath ?? '').replace(/\/+$/, '')
  const timing = { pollMs: options.pollMs ?? 500, maxStreamMs: options.maxStreamMs ?? 300_000 }
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024

  return async function handle(request: Request): Promise<Response> {
    try {
      const url = new URL(request.url)
      const route = url.pathname.startsWith(`${base}/`) || url.pathname === base ? matchRoute(url.pathname.slice(base.length)) : undefined
      if (!route) return refuse('ROUTE_NOT_FOUND', `No route ${url.pathname}; the handler serves ${base}/sessions.`)
      if (request.method !== route.method) {
        return refuse('METHOD_NOT_ALLOWED', `${url.pathname} takes ${route.method}, not ${request.method}.`, { allow: route.method })
      }
      // authorize first: a refused caller learns nothing about its input, not even that an id is malformed.
      const allow = allowed(await authorize(request, route.action, route.sessionId), route.sessionId)
      if (!allow) {
        return refuse(
          'FORBIDDEN',
          `This request may not ${route.action}${route.sessionId === undefined ? '' : ` on session ${JSON.stringify(route.sessionId)}`}.`,
        )
      }
      if (route.malformed) throw new Refusal('INVALID_ARGUMENT', route.malformed)
      if (route.sessionId !== undefined) checkSessionId(route.sessionId, host)
      if (route.action === 'sessions.list') return json(await listSessions(host, url.searchParams, allow.scope))
      if (route.action === 'session.read') return json(await readSession(host, route.sessionId!, url.searchParams))
      if (route.action === 'session.watch') return await watchSession(host, route.sessionId!, request, url.searchParams, timing)
      await write(host, route.action, route.sessionId!, await readBody(request, maxBodyBytes))
      return json({ ok: true })
    } catch (error) {
      return errorResponse(error, request, options.onError)
    }
  }
}

/** The POST routes: each body checked field by field, then the host decides. */
async function write(host: Host, action: HarnessAction, sessionId: string, body: unknown): Promise<void> {
  if (action === 'session.answer') {
    const { questionId, answer } = fields(body, { questionId: 'string', answer: 'any' })
    await host.answer({ sessionId, questionId: questionId as string, answer })
  } else if (action === 'session.approve') {
    const { toolCallId, approved, reason } = fields(body, { toolCallId: 'string', approved: 'boolean', reason: 'string?' })
    await host.approve({
      sessionId,
      toolCallId: toolCallId as string,
      approved: approved as boolean,
      ...(reason === undefined ? {} : { reason: reason as string }),
    })
  } else {
    const { reason } = fields(body, { reason: 'string?' })
    await cancelTurn(host, sessionId, reason as string | undefined)
  }
}

function checkOptions(options: HarnessHandlerOptions): HarnessHandlerOptions {
  if (typeof options !== 'object' || options === null) {
    throw new HarnessError('INVALID_ARGUMENT', 'createHarnessHandler takes { host, authorize }.')
  }
  if (typeof options.authorize !== 'function') {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      'createHarnessHandler needs authorize(request, action, sessionId): it decides who may read and answer sessions. For a local tool that trusts every caller, pass () => true on purpose.',
    )
  }
  const host = options.host as Partial<Host> | undefined
  if (!host || typeof host.answer !== 'function' || typeof host.open !== 'function' || !host.store) {
    throw new HarnessError('INVALID_ARGUMENT', 'createHarnessHandler needs the host from createHost({ store, harnesses }).')
  }
  for (const [name, value] of [
    ['pollMs', options.pollMs],
    ['maxStreamMs', options.maxStreamMs],
    ['maxBodyBytes', options.maxBodyBytes],
  ] as const) {
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) {
      throw new HarnessError('INVALID_ARGUMENT', `createHarnessHandler: ${name} must be a number > 0, not ${String(value)}.`)
    }
  }
  return options
}

interface Route {
  method: 'GET' | 'POST'
  action: HarnessAction
  sessionId?: string
  /** Why the session id in the path is no id; refused only after `authorize` allowed the request. */
  malformed?: string
}

/** The action of each route of one session, by the path's last part. */
const ACTIONS = {
  '': 'session.read',
  events: 'session.watch',
  answer: 'session.answer',
  approve: 'session.approve',
  cancel: 'session.cancel',
} as const satisfies Record<string, HarnessAction>

function matchRoute(path: string): Route | undefined {
  const parts = path.split('/').slice(1)
  if (parts[0] !== 'sessions') return undefined
  if (parts.length === 1) return { method: 'GET', action: 'sessions.list' }
  if (parts.length > 3) return undefined
  const tail = parts[2] ?? ''
  const action = Object.hasOwn(ACTIONS, tail) && !(parts.length === 3 && tail === '') ? ACTIONS[tail as keyof typeof ACTIONS] : undefined
  if (!action) return undefined
  const method = action === 'session.read' || action === 'session.watch' ? 'GET' : 'POST'
  try {
    return { method, action, sessionId: decodeURIComponent(parts[1]!) }
  } catch {
    // authorize sees the id as it came; it is refused after, whatever authorize says.
    const malformed = 'The session id in the path is not valid percent-encoding; encode it with encodeURIComponent.'
    return { method, action, sessionId: parts[1]!, malformed }
  }
}

function checkSessionId(sessionId: string, host: Host): void {
  try {
    assertLogId(sessionId, host.store.limits)
  } catch (error) {
    throw new Refusal('INVALID_ARGUMENT', (error as Error).message)
  }
}

async function cancelTurn(host: Host, sessionId: string, reason: string | undefined): Promise<void> {
  if ((await host.store.read(sessionId, { limit: 1 })).length === 0) {
    throw new Refusal('SESSION_NOT_FOUND', `There is no session ${JSON.stringify(sessionId)} (its log is empty).`)
  }
  // Takes the lease: LEASE_HELD (409) while a host or worker drives the turn.
  const session = await host.open({ sessionId })
  try {
    if (!session.needsRecovery) throw new Refusal('SESSION_BUSY', `Session ${JSON.stringify(sessionId)} has no open turn to cancel.`)
    await session.cancel(reason)
  } finally {
    await session.close()
  }
}
