import { createServer, type IncomingMessage, request as forward, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A server the proxy sends requests to; `port` is undefined while it is down. */
export interface Backend {
  readonly name: string
  readonly port: number | undefined
}

/**
 * The load balancer in front of the servers, in small: each request goes to the next server
 * in turn (round robin, no sticky sessions), its body read first so that a server that
 * refuses the connection (dead, restarting) is skipped and the request goes to the next.
 * A response is streamed as it comes; when its server dies mid-stream the client's
 * connection is cut too, as a real balancer does, and the client reconnects.
 */
export async function startProxy(backends: () => readonly Backend[], port: number): Promise<Server & { url: string }> {
  let next = 0
  const server = createServer(async (req, res) => {
    const body = await readBody(req)
    const list = backends()
    for (let tried = 0; tried < list.length; tried++) {
      const backend = list[next++ % list.length]!
      if (backend.port === undefined) continue
      if (await pass(req, body, res, backend.port)) return
    }
    res.writeHead(503, { 'Content-Type': 'application/json' })
    res.end(JSON.stringify({ code: 'NO_SERVER', message: 'No server answers right now; try again in a moment.' }))
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return Object.assign(server, { url })
}

/** Forwards one request; false when the server could not be reached (nothing was sent to the client). */
function pass(req: IncomingMessage, body: Buffer, res: ServerResponse, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const upstream = forward(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: { ...req.headers, 'content-length': String(body.length) } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        res.flushHeaders()
        answer.pipe(res)
        // The server died mid-response: cut the client's connection rather than end it cleanly.
        answer.once('aborted', () => res.destroy())
        answer.once('error', () => res.destroy())
        resolve(true)
      },
    )
    upstream.once('error', () => {
      if (res.headersSent) res.destroy()
      resolve(res.headersSent)
    })
    res.once('close', () => upstream.destroy())
    upstream.end(req.method === 'GET' || req.method === 'HEAD' ? undefined : body)
  })
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.once('end', () => resolve(Buffer.concat(chunks)))
    req.once('error', reject)
  })
}
