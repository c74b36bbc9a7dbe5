import { resumeServerSentEventsResponse } from '@tanstack/ai'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import { sessionOfRunId } from '../runtime/inbox-log.js'
import { runStream } from '../runtime/input-stream.js'
import type { Host } from '../runtime/host.js'
import type { TurnInput } from '../runtime/session.js'
import { attachTo } from '../streams/request.js'
import { type ChatHydration, chatHydration } from './chat-hydration.js'

/** Options of {@link createChatRoute}. */
export interface ChatRouteOptions {
  /** The host of this server: it submits the prompts and drives the sessions it can. */
  host: Host
  /** Required: whether the request may prompt or read `sessionId` (your cookie or token check). */
  authorize: (request: Request, sessionId: string) => boolean | Promise<boolean>
  /** Told about a turn this server drove that failed (its wakeup stays: a worker tries again). */
  onError?: (error: unknown) => void
}

/** The two handlers of a chat route: `POST` a prompt, `GET` to resume a turn's stream. */
export interface ChatRoute {
  /**
   * Body `{ sessionId, inputId, messages }` (the last user message is the prompt) or
   * `{ sessionId, inputId, prompt }`; TanStack AI client's body works as it is (its
   * `threadId` is the session, its `runId` the input). Submits the prompt (`host.submit`,
   * a second POST of one `inputId` is the same turn), starts driving the session here (the
   * turn runs to its end whether or not the response is read), and answers with TanStack
   * AI's resumable SSE response over the turn's durable stream, from its start or after the
   * offset in `Last-Event-ID` (the client's reconnect re-sends its POST with it), with the
   * stream's run id in `X-Run-Id`.
   */
  POST(request: Request): Promise<Response>
  /**
   * Resumes a turn's stream after the offset in `Last-Event-ID` (or `?offset`, with
   * `X-Run-Id` or `?runId`): every chunk after it, once, in order, to the turn's end,
   * through a crash of the host that drove it. With only `?threadId=<sessionId>`, answers
   * the client's hydration instead (JSON {@link ChatHydration}: the transcript and the run
   * still going), what TanStack AI's `ChatClient` asks on mount with `persistence: true`.
   */
  GET(request: Request): Promise<Response>
}

/** A chat route for sessions behind a web app: any server takes a prompt, any server resumes a stream. */
export function createChatRoute(options: ChatRouteOptions): ChatRoute {
  const { host } = options
  if (typeof options.authorize !== 'function')
    throw new HarnessError('INVALID_ARGUMENT', 'createChatRoute needs authorize(request, sessionId): decide who may prompt which session.')
  const refuse = async (request: Request, sessionId: unknown): Promise<Response | undefined> => {
    if (typeof sessionId !== 'string') return json(400, 'INVALID_ARGUMENT', 'Name the session: sessionId (a string).')
    if ((await options.authorize(request, sessionId)) !== true) return json(403, 'FORBIDDEN', 'This request may not use this session.')
    return undefined
  }
  return {
    async POST(request) {
      const body = (await request.json().catch(() => undefined)) as Record<string, unknown> | undefined
      const refused = await refuse(request, sessionOf(body))
      if (refused) return refused
      const sessionId = sessionOf(body)
      try {
        const inputId = body!.inputId ?? body!.runId ?? request.headers.get('X-Run-Id') ?? undefined
        const { runId } = await host.submit({ sessionId: sessionId as string, inputId: inputId as string, prompt: promptOf(body!) })
        // Not awaited: the turn belongs to the host now, not to this request.
        void host.drive(sessionId as string).catch((error) => options.onError?.(error))
        const offset = request.headers.get('Last-Event-ID') || '-1'
        return resumeServerSentEventsResponse({ adapter: runStream(host.store, host.clock, runId, offset), headers: { 'X-Run-Id': runId } })
      } catch (error) {
        return refusal(error)
      }
    },
    async GET(request) {
      const threadId = hydrationOf(request)
      if (threadId !== undefined) {
        const refused = await refuse(request, threadId)
        if (refused) return refused
        try {
          const hydration = await chatHydration(host.store, threadId)
          return new Response(JSON.stringify(hydration), { headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } })
        } catch (error) {
          return refusal(error)
        }
      }
      let attached: { runId: string; offset: string | null }
      try {
        attached = attachTo(request)
      } catch (error) {
        return refusal(error)
      }
      const refused = await refuse(request, sessionOfRunId(attached.runId))
      if (refused) return refused
      return resumeServerSentEventsResponse({
        adapter: runStream(host.store, host.clock, attached.runId, attached.offset),
        headers: { 'X-Run-Id': attached.runId },
      })
    },
  }
}

/** The session of a POST: `sessionId`, else TanStack AI client's `threadId`. */
function sessionOf(body: Record<string, unknown> | undefined): unknown {
  return body?.sessionId ?? body?.threadId
}

/** The session a GET asks the hydration of: `?threadId` with no run, offset or `Last-Event-ID`. */
function hydrationOf(request: Request): string | undefined {
  const params = new URL(request.url).searchParams
  const threadId = params.get('threadId')
  if (threadId === null || params.has('runId') || params.has('offset') || request.headers.has('Last-Event-ID')) return undefined
  return threadId
}

/** The prompt of a POST: `prompt`, else the text of the last user message. */
function promptOf(body: Record<string, unknown>): TurnInput {
  if (typeof body.prompt === 'string') return body.prompt
  const messages = Array.isArray(body.messages) ? (body.messages as Array<Record<string, unknown>>) : []
  const last = messages.findLast((m) => m?.role === 'user')
  if (!last) throw new HarnessError('INVALID_ARGUMENT', 'The body holds no prompt: send prompt (a string) or messages with a user message.')
  if (typeof last.content === 'string') return last.content
  const parts = Array.isArray(last.parts) ? (last.parts as Array<Record<string, unknown>>) : []
  return parts
    .filter((p) => p?.type === 'text')
    .map((p) => String(p.content ?? p.text ?? ''))
    .join('')
}

const STATUS: Record<string, number> = { SESSION_BUSY: 409, STREAM_NOT_FOUND: 404, STORE_UNAVAILABLE: 503 }

function refusal(error: unknown): Response {
  if (!isHarnessError(error)) throw error
  return json(STATUS[error.code] ?? 400, error.code, error.message)
}

function json(status: number, code: string, message: string): Response {
  return new Response(JSON.stringify({ code, message }), { status, headers: { 'Content-Type': 'application/json' } })
}
