import { randomBytes, timingSafeEqual } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Host } from '@tanstack/ai-harness'
import { createHarnessHandler } from '@tanstack/ai-harness/http'
import { toNodeListener } from '@tanstack/ai-harness/http/node'

export interface InspectorOptions {
  /** The host whose store the page shows, and through which it answers and cancels. */
  host: Host
  /** Default 0: any free port. */
  port?: number
  /** Default 127.0.0.1: only this machine. */
  hostname?: string
  /**
   * The secret the page must send with every API request. Default: a random one, in the
   * URL the inspector returns (after `#`, so it never reaches a server log or a Referer).
   */
  token?: string
  /** How often the live stream looks for new records. Default 300 ms. */
  pollMs?: number
}

export interface Inspector {
  /** The page's URL, with its token. */
  readonly url: string
  readonly server: Server
  close(): Promise<void>
}

const here = dirname(fileURLToPath(import.meta.url))
const PUBLIC = join(here, '..', 'public')
const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: join(PUBLIC, 'index.html'), type: 'text/html; charset=utf-8' },
  '/app.js': { file: join(PUBLIC, 'app.js'), type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: join(PUBLIC, 'app.css'), type: 'text/css; charset=utf-8' },
  '/vendor/jsoneditor.js': {
    file: createRequire(import.meta.url).resolve('@json-editor/json-editor/dist/jsoneditor.js'),
    type: 'text/javascript; charset=utf-8',
  },
}

/**
 * Starts the inspector: one `node:http` server with the page and `@tanstack/ai-harness/http`
 * under `/api`. Every API request must carry the token (`authorization: Bearer …`, or
 * `?token=` for the event stream, which an `EventSource` cannot give headers).
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const token = options.token ?? randomBytes(18).toString('base64url')
  const expected = Buffer.from(token)
  const matches = (given: string | null) => {
    const bytes = Buffer.from(given ?? '')
    return bytes.length === expected.length && timingSafeEqual(bytes, expected)
  }
  const api = toNodeListener(
    createHarnessHandler({
      host: options.host,
      basePath: '/api',
      pollMs: options.pollMs ?? 300,
      authorize: (request) =>
        matches(request.headers.get('authorization')?.replace(/^Bearer /, '') ?? null) ||
        matches(new URL(request.url).searchParams.get('token')),
      onError: (error) => process.stderr.write(`inspector: ${String((error as Error)?.stack ?? error)}\n`),
    }),
  )
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://inspector').pathname
    if (path === '/api' || path.startsWith('/api/')) {
      void api(req, res)
      return
    }
    if (path === '/favicon.ico') {
      res.writeHead(204).end()
      return
    }
    const asset = STATIC[path]
    if (!asset || req.method !== 'GET') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    readFile(asset.file).then(
      (body) => res.writeHead(200, { 'content-type': asset.type, 'cache-control': 'no-store' }).end(body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('missing asset'),
    )
  })
  const hostname = options.hostname ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, hostname, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${hostname}:${port}/#token=${token}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
