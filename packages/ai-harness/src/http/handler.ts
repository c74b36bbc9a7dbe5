import { HarnessError, type HarnessErrorCode, isHarnessError } from '../contract/errors.js'
import { assertLogId } from '../contract/prepare-batch.js'
import { readAll } from '../contract/read-all.js'
import type { LogEntry } from '../contract/types.js'
import type { JsonObject } from '../json/json-types.js'
import type { Host } from '../runtime/host.js'
import { foldLog, type OpenWaits, openWaits, parkedCall, type SessionState } from '../runtime/session-fold.js'

/** What a request asks to do; `authorize` decides on it. */
export type HarnessAction = 'sessions.list' | 'session.read' | 'session.watch' | 'session.answer' | 'session.approve' | 'session.cancel'

/**
 * Decides whether a request may do `action` (on `sessionId`, for the actions of one
 * session). Return `true` to allow; anything else refuses with 403 `FORBIDDEN`, before the
 * store is touched. Read your session cookie or bearer token from `request` here.
 */
export type Authorize = (request: Request, action: HarnessAction, sessionId: string | undefined) => boolean | Promise<boolean>

export interface HarnessHandlerOptions {
  /** The host whose store the handler reads and whose sessions it answers and cancels. */
  host: Host
  /** Required: every request passes it first. Without it `createHarnessHandler` throws. */
  authorize: Authorize
  /** The path the handler is mounted under, e.g. `/api/harness`. Default `''`. */
  basePath?: string
  /** How often a server-sent event stream looks for new records. Default 500 ms. */
  pollMs?: number
  /** A stream ends after this long; the browser's `EventSource` reconnects from the last seq. Default 5 min. */
  maxStreamMs?: number
  /** Largest request body, in bytes. Default 1 MiB. */
  maxBodyBytes?: number
  /** Told about errors that are not the caller's fault (a 5xx), e.g. to log them. The response never shows them. */
  onError?: (error: unknown, request: Request) => void
}

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

/** The JSON body of every refusal: a stable code and what to do. Never a stack trace. */
export interface HandlerErrorBody {
  code: HandlerErrorCode
  message: string
}

/** An open question of a session, as the question event showed it. */
export interface OpenQuestion {
  questionId: string
  toolCallId: string
  name: string
  message: string
  /** The JSON Schema an answer must match. */
  schema: JsonObject
  /** Why the last answer was refused by the tool, if one was. */
  rejected: string | null
}

/** What `GET /sessions/:id` returns. */
export interface SessionView {
  sessionId: string
  harness: string | null
  /** `idle`: no open turn; `waiting`: parked on a person; `sleeping`: parked until a time; `open`: running, cut, or waiting for a child. */
  status: 'idle' | 'waiting' | 'sleeping' | 'open'
  turns: number
  /** The seq of the last record: pass it as `after` to the events stream. */
  lastSeq: number
  questions: OpenQuestion[]
  /** Tool calls of the open turn that wait for a person's approval (`POST …/approve`). */
  approvals: OpenApprovalView[]
  entries: LogEntry[]
}

/** A tool call waiting for approval, as the session view shows it. */
export interface OpenApprovalView {
  toolCallId: string
  toolName: string
  /** The call's arguments as the model gave them. */
  input: unknown
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
  STORE_UNAVAILABLE: 503,
}

class Refusal extends Error {
  constructor(
    readonly code: HandlerErrorCode,
    message: string,
  ) {
    super(message)
  }
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  })

const refuse = (code: HandlerErrorCode, message: string, headers?: Record<string, string>) =>
  json({ code, message } satisfies HandlerErrorBody, STATUS[code] ?? 400, headers)

/**
 * An HTTP handler for the people who look after sessions, on the web-standard
 * `Request → Response` (mount it in TanStack Start, Hono, Next, or `node:http` with
 * `toNodeListener`). Routes, under `basePath`:
 *
 * | route | action | |
 * | --- | --- | --- |
 * | `GET /sessions?after=&limit=&waiting=1` | `sessions.list` | ids, paged; `waiting=1`: those waiting for a person |
 * | `GET /sessions/:id?after=&limit=` | `session.read` | the session's status, open questions and records |
 * | `GET /sessions/:id/events?after=` | `session.watch` | server-sent events: each new record (`id` = its seq) |
 * | `POST /sessions/:id/answer` `{ questionId, answer }` | `session.answer` | answers a question |
 * | `POST /sessions/:id/approve` `{ toolCallId, approved, reason? }` | `session.approve` | approves or denies a tool call that waits for approval |
 * | `POST /sessions/:id/cancel` `{ reason? }` | `session.cancel` | ends the open turn as cancelled |
 *
 * Every request passes `authorize(request, action, sessionId)` before anything else. A
 * refusal is JSON `{ code, message }` with a 4xx (5xx only for the store or the server),
 * and writes nothing. POST bodies must be `application/json` (so a cross-site form
 * cannot post them without a CORS preflight).
 */
export function createHarnessHandler(options: HarnessHandlerOptions): (request: Request) => Promise<Response> {
  const { host, authorize } = checkOptions(options)
  const base = (options.basePath ?? '').replace(/\/+$/, '')
  const pollMs = options.pollMs ?? 500
  const maxStreamMs = options.maxStreamMs ?? 300_000
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024

  return async function handle(request: Request): Promise<Response> {
    try {
      const url = new URL(request.url)
      if (!url.pathname.startsWith(`${base}/`) && url.pathname !== base) {
        return refuse('ROUTE_NOT_FOUND', `No route ${url.pathname}; the handler serves ${base}/sessions.`)
      }
      const route = matchRoute(url.pathname.slice(base.length))
      if (!route) return refuse('ROUTE_NOT_FOUND', `No route ${url.pathname}; the handler serves ${base}/sessions.`)
      if (request.method !== route.method) {
        return refuse('METHOD_NOT_ALLOWED', `${url.pathname} takes ${route.method}, not ${request.method}.`, { allow: route.method })
      }
      // authorize first: a refused caller learns nothing about its input, not even that an id is malformed.
      if ((await authorize(request, route.action, route.sessionId)) !== true) {
        return refuse(
          'FORBIDDEN',
          `This request may not ${route.action}${route.sessionId === undefined ? '' : ` on session ${JSON.stringify(route.sessionId)}`}.`,
        )
      }
      if (route.sessionId !== undefined) checkSessionId(route.sessionId, host)
      const body = route.method === 'POST' ? await readBody(request, maxBodyBytes) : undefined
      switch (route.action) {
        case 'sessions.list':
          return json(await listSessions(host, url.searchParams))
        case 'session.read':
          return json(await readSession(host, route.sessionId!, url.searchParams))
        case 'session.watch':
          return await watchSession(host, route.sessionId!, request, url.searchParams, { pollMs, maxStreamMs })
        case 'session.answer': {
          const { questionId, answer } = fields(body, { questionId: 'string', answer: 'any' })
          await host.answer({ sessionId: route.sessionId!, questionId: questionId as string, answer })
          return json({ ok: true })
        }
        case 'session.approve': {
          const { toolCallId, approved, reason } = fields(body, { toolCallId: 'string', approved: 'boolean', reason: 'string?' })
          await host.approve({
            sessionId: route.sessionId!,
            toolCallId: toolCallId as string,
            approved: approved as boolean,
            ...(reason === undefined ? {} : { reason: reason as string }),
          })
          return json({ ok: true })
        }
        case 'session.cancel': {
          const { reason } = fields(body, { reason: 'string?' })
          await cancelTurn(host, route.sessionId!, reason as string | undefined)
          return json({ ok: true })
        }
      }
    } catch (error) {
      if (error instanceof Refusal) return refuse(error.code, error.message)
      if (isHarnessError(error)) {
        const status = STATUS[error.code] ?? 400
        if (status >= 500) options.onError?.(error, request)
        return json({ code: error.code, message: error.message } satisfies HandlerErrorBody, status)
      }
      options.onError?.(error, request)
      return refuse('INTERNAL_ERROR', 'The server failed while handling this request; its log has the details.')
    }
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
}

function matchRoute(path: string): Route | undefined {
  const parts = path.split('/').slice(1)
  if (parts[0] !== 'sessions') return undefined
  if (parts.length === 1) return { method: 'GET', action: 'sessions.list' }
  let sessionId: string
  try {
    sessionId = decodeURIComponent(parts[1]!)
  } catch {
    throw new Refusal('INVALID_ARGUMENT', 'The session id in the path is not valid percent-encoding; encode it with encodeURIComponent.')
  }
  if (parts.length === 2) return { method: 'GET', action: 'session.read', sessionId }
  if (parts.length !== 3) return undefined
  const action = ({ events: 'session.watch', answer: 'session.answer', approve: 'session.approve', cancel: 'session.cancel' } as const)[
    parts[2] as 'events'
  ]
  if (!action) return undefined
  return { method: action === 'session.watch' ? 'GET' : 'POST', action, sessionId }
}

function checkSessionId(sessionId: string, host: Host): void {
  try {
    assertLogId(sessionId, host.store.limits)
  } catch (error) {
    throw new Refusal('INVALID_ARGUMENT', (error as Error).message)
  }
}

async function readBody(request: Request, maxBytes: number): Promise<unknown> {
  const type = request.headers.get('content-type') ?? ''
  if (!/^application\/json\b/i.test(type)) {
    throw new Refusal('BODY_INVALID', `Send the body as JSON with content-type application/json, not ${JSON.stringify(type || 'none')}.`)
  }
  const declared = Number(request.headers.get('content-length') ?? '0')
  if (declared > maxBytes) throw new Refusal('BODY_TOO_LARGE', `The body is over ${maxBytes} bytes.`)
  const text = await readText(request, maxBytes)
  try {
    return JSON.parse(text)
  } catch {
    throw new Refusal('BODY_INVALID', 'The body is not valid JSON.')
  }
}

/** Reads at most `maxBytes` of the body, refusing more without buffering it. */
async function readText(request: Request, maxBytes: number): Promise<string> {
  if (!request.body) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => {})
      throw new Refusal('BODY_TOO_LARGE', `The body is over ${maxBytes} bytes.`)
    }
    chunks.push(value)
  }
  const all = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.byteLength
  }
  return new TextDecoder().decode(all)
}

type FieldType = 'string' | 'string?' | 'boolean' | 'any'

/** The named fields of a JSON object body, each checked; an unknown field is refused too. */
function fields(body: unknown, spec: Record<string, FieldType>): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Refusal('BODY_INVALID', `The body must be a JSON object with ${Object.keys(spec).join(', ')}.`)
  }
  const record = body as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!(key in spec))
      throw new Refusal('BODY_INVALID', `Unknown field ${JSON.stringify(key)}; the body takes ${Object.keys(spec).join(', ')}.`)
  }
  for (const [key, type] of Object.entries(spec)) {
    const value = record[key]
    const ok =
      type === 'any' ? key in record : type === 'string?' ? value === undefined || typeof value === 'string' : typeof value === type
    if (!ok) throw new Refusal('BODY_INVALID', `Field ${key} must be ${type === 'any' ? 'present' : `a ${type.replace('?', '')}`}.`)
  }
  return record
}

function numberParam(params: URLSearchParams, name: string, fallback: number, max: number): number {
  const raw = params.get(name)
  if (raw === null || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new Refusal('INVALID_ARGUMENT', `Query parameter ${name} must be a whole number from 0 to ${max}, not ${JSON.stringify(raw)}.`)
  }
  return value
}

async function listSessions(host: Host, params: URLSearchParams) {
  const sessions = host.store.sessions
  if (!sessions) {
    throw new HarnessError(
      'CAPABILITY_MISSING',
      "This host's store cannot list sessions (it has no sessions capability); open a session by its id instead.",
    )
  }
  const limit = numberParam(params, 'limit', 50, 1000) || 50
  const after = params.get('after') ?? undefined
  const waiting = params.get('waiting')
  if (waiting !== null && waiting !== '1' && waiting !== '0' && waiting !== 'true' && waiting !== 'false') {
    throw new Refusal('INVALID_ARGUMENT', 'Query parameter waiting is 1 or 0.')
  }
  const list = waiting === '1' || waiting === 'true' ? sessions.waiting : sessions.list
  const ids = await list.call(sessions, { ...(after ? { after } : {}), limit })
  // Only an empty page ends a listing: `next` is the cursor of the next page, null at the end.
  return { sessions: ids, next: ids.length > 0 ? ids.at(-1)! : null }
}

/** The questions of the open turn nobody has answered yet (as `openWaits` finds them), in the handler's shape. */
export function openQuestions(state: SessionState): OpenQuestion[] {
  return openWaits('', state).questions.map(questionView)
}

const questionView = ({ questionId, toolCallId, name, message, schema, rejected }: OpenWaits['questions'][number]): OpenQuestion => ({
  questionId,
  toolCallId,
  name,
  message,
  schema,
  rejected: rejected ?? null,
})

async function readSession(host: Host, sessionId: string, params: URLSearchParams): Promise<SessionView> {
  const after = numberParam(params, 'after', 0, Number.MAX_SAFE_INTEGER)
  const limit = numberParam(params, 'limit', 1000, 10_000) || 1000
  const entries = await readAll(host.store, sessionId)
  if (entries.length === 0) throw new Refusal('SESSION_NOT_FOUND', `There is no session ${JSON.stringify(sessionId)} (its log is empty).`)
  const state = foldLog(entries)
  const parked = parkedCall(state)
  const waits = openWaits(sessionId, state)
  const questions = waits.questions.map(questionView)
  const approvals = waits.approvals.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input }))
  const status: SessionView['status'] = !state.openTurn
    ? 'idle'
    : questions.length > 0 || approvals.length > 0
      ? 'waiting'
      : parked?.reason === 'sleep'
        ? 'sleeping'
        : 'open'
  return {
    sessionId,
    harness: state.harness ?? null,
    status,
    turns: state.turns,
    lastSeq: entries.at(-1)!.seq,
    questions,
    approvals,
    entries: entries.filter((e) => e.seq > after).slice(0, limit),
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

/**
 * A server-sent event stream of the session's records after `after` (or the
 * `Last-Event-ID` a reconnecting `EventSource` sends): one `record` event per entry, its
 * `id` the seq. It polls the log every `pollMs`, comments every 15 s so proxies keep the
 * connection, and ends when the client goes or after `maxStreamMs` (the client reconnects).
 */
async function watchSession(
  host: Host,
  sessionId: string,
  request: Request,
  params: URLSearchParams,
  timing: { pollMs: number; maxStreamMs: number },
): Promise<Response> {
  const lastEventId = request.headers.get('last-event-id')
  let after = numberParam(params, 'after', 0, Number.MAX_SAFE_INTEGER)
  if (lastEventId !== null && /^\d+$/.test(lastEventId)) after = Math.max(after, Number(lastEventId))
  // Read once before answering, so a store that fails fails the request with its code.
  let pending = await host.store.read(sessionId, { after, limit: 100 })
  const encoder = new TextEncoder()
  const stop = new AbortController()
  const onAbort = () => stop.abort()
  request.signal.addEventListener('abort', onAbort, { once: true })
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        stop.signal.removeEventListener('abort', wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      stop.signal.addEventListener('abort', wake, { once: true })
    })
  const started = Date.now()
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(
        encoder.encode(`retry: ${Math.max(1000, timing.pollMs)}\n: watching ${JSON.stringify(sessionId)} after ${after}\n\n`),
      )
      let quietSince = Date.now()
      try {
        while (!stop.signal.aborted && Date.now() - started < timing.maxStreamMs) {
          for (const entry of pending) {
            controller.enqueue(encoder.encode(`id: ${entry.seq}\nevent: record\ndata: ${JSON.stringify(entry)}\n\n`))
            after = entry.seq
          }
          if (pending.length > 0) quietSince = Date.now()
          else {
            if (Date.now() - quietSince > 15_000) {
              controller.enqueue(encoder.encode(': still here\n\n'))
              quietSince = Date.now()
            }
            await sleep(timing.pollMs)
          }
          if (stop.signal.aborted) break
          pending = await host.store.read(sessionId, { after, limit: 100 })
        }
      } catch (error) {
        // The stream has started: tell the client in its own terms, then end.
        const code = isHarnessError(error) ? error.code : 'INTERNAL_ERROR'
        controller.enqueue(encoder.encode(`event: failed\ndata: ${JSON.stringify({ code })}\n\n`))
      } finally {
        request.signal.removeEventListener('abort', onAbort)
        try {
          controller.close()
        } catch {
          // The client cancelled the stream already.
        }
      }
    },
    cancel() {
      stop.abort()
    },
  })
  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
  })
}
