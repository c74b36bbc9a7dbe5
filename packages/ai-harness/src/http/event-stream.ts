import { isHarnessError } from '../contract/errors.js'
import type { LogEntry } from '../contract/types.js'
import type { Host } from '../runtime/host.js'
import { numberParam } from './request-input.js'

/** Records per read of the log, and so most records a stream holds for a client that reads nothing. */
const PAGE = 100
/** A comment after this long without records, so proxies keep the connection. */
const HEARTBEAT_MS = 15_000

export interface StreamTiming {
  pollMs: number
  maxStreamMs: number
}

/**
 * A server-sent event stream of the session's records after `after` (or the
 * `Last-Event-ID` a reconnecting client sends): one `record` event per entry, its `id`
 * the seq. It reads the log a page at a time, and only when the client has taken the
 * page before (a pull stream with room for one chunk): a client that reads nothing
 * makes the server hold one page, never the log. It polls every `pollMs` when there is
 * nothing new, comments every 15 s, and ends when the client goes or after `maxStreamMs`
 * (the client reconnects).
 */
export async function watchSession(
  host: Host,
  sessionId: string,
  request: Request,
  params: URLSearchParams,
  timing: StreamTiming,
): Promise<Response> {
  const lastEventId = request.headers.get('last-event-id')
  let after = numberParam(params, 'after', 0, Number.MAX_SAFE_INTEGER)
  if (lastEventId !== null && /^\d+$/.test(lastEventId)) after = Math.max(after, Number(lastEventId))
  const read = () => host.store.read(sessionId, { after, limit: PAGE })
  // Read once before answering, so a store that fails fails the request with its code.
  let pending: LogEntry[] | undefined = await read()
  const encoder = new TextEncoder()
  const stop = new AbortController()
  const onAbort = () => stop.abort()
  request.signal.addEventListener('abort', onAbort, { once: true })
  const started = Date.now()
  let quietSince = Date.now()
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    request.signal.removeEventListener('abort', onAbort)
    try {
      controller.close()
    } catch {
      // The client cancelled the stream already.
    }
  }
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(
          encoder.encode(`retry: ${Math.max(1000, timing.pollMs)}\n: watching ${JSON.stringify(sessionId)} after ${after}\n\n`),
        )
      },
      // One chunk per pull: the next page is read only once the client took this one.
      async pull(controller) {
        try {
          for (;;) {
            if (stop.signal.aborted || Date.now() - started >= timing.maxStreamMs) return finish(controller)
            const page: LogEntry[] = pending ?? (await read())
            pending = undefined
            if (page.length > 0) {
              quietSince = Date.now()
              after = page.at(-1)!.seq
              controller.enqueue(encoder.encode(page.map((e) => `id: ${e.seq}\nevent: record\ndata: ${JSON.stringify(e)}\n\n`).join('')))
              return
            }
            if (Date.now() - quietSince > HEARTBEAT_MS) {
              quietSince = Date.now()
              controller.enqueue(encoder.encode(': still here\n\n'))
              return
            }
            await sleep(timing.pollMs, stop.signal)
          }
        } catch (error) {
          // The stream has started: tell the client in its own terms (a code, never the error's text), then end.
          const code = isHarnessError(error) ? error.code : 'INTERNAL_ERROR'
          controller.enqueue(encoder.encode(`event: failed\ndata: ${JSON.stringify({ code })}\n\n`))
          finish(controller)
        }
      },
      cancel() {
        stop.abort()
        request.signal.removeEventListener('abort', onAbort)
      },
    },
    { highWaterMark: 1 },
  )
  return new Response(stream, {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
  })
}

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', wake)
      resolve()
    }
    const timer = setTimeout(wake, ms)
    signal.addEventListener('abort', wake, { once: true })
  })
}
