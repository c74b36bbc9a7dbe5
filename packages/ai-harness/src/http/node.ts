import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'

/**
 * Mounts a `Request → Response` handler on `node:http` (or anything that passes Node's
 * `IncomingMessage` and `ServerResponse`, such as Express or Connect middleware):
 *
 * ```ts
 * http.createServer(toNodeListener(createHarnessHandler({ host, authorize }))).listen(3000)
 * ```
 *
 * The request's `signal` aborts when the client goes, which ends a server-sent event stream.
 */
export function toNodeListener(handler: (request: Request) => Promise<Response>) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const gone = new AbortController()
    res.on('close', () => gone.abort())
    try {
      const response = await handler(toRequest(req, gone.signal))
      res.writeHead(response.status, Object.fromEntries(response.headers))
      if (!response.body) {
        res.end()
        return
      }
      const reader = response.body.getReader()
      gone.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), { once: true })
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        // Each chunk at once (an event stream must not wait in a buffer), but no next chunk
        // before the socket took this one: a client that reads nothing holds back the handler.
        if (!res.write(value)) await drained(res, gone.signal)
      }
      res.end()
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' })
      res.end(
        res.headersSent ? undefined : JSON.stringify({ code: 'INTERNAL_ERROR', message: 'The server failed while handling this request.' }),
      )
    }
  }
}

/** Resolves when `res` can take more, or when the client is gone. */
function drained(res: ServerResponse, gone: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      gone.removeEventListener('abort', done)
      resolve()
    }
    res.once('drain', done)
    gone.addEventListener('abort', done, { once: true })
    if (gone.aborted) done()
  })
}

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const host = req.headers.host ?? 'localhost'
  const url = new URL(req.url ?? '/', `http://${host}`)
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const one of [value].flat()) headers.append(name, one)
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
  return new Request(url, {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit)
}
