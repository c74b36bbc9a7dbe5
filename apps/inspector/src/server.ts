import { randomBytes, timingSafeEqual } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Host } from '@tanstack/ai-harness'
import { type Authorize, createHarnessHandler } from '@tanstack/ai-harness/http'
import { toNodeListener } from '@tanstack/ai-harness/http/node'

export interface InspectorListenerOptions {
  /** The host whose store the page shows, and through which it answers, approves and cancels. */
  host: Host
  /**
   * Who may use the API. Default: requests that carry `token` as `authorization: Bearer …`.
   * Pass your own (your session cookie, your roles, a tenant scope) when you
   * mount the inspector in your app; the page then sends the token it got after `#token=`.
   */
  authorize?: Authorize
  /** The secret the page must send with every API request, when `authorize` is not given. Default: a random one. */
  token?: string
  /** How often the live stream looks for new records. Default 300 ms. */
  pollMs?: number
  /** Told about server errors (5xx); the response never shows them. Default: written to stderr. */
  onError?: (error: unknown) => void
}

export interface InspectorListener {
  /** A `node:http` request listener (or Express/Connect middleware) serving the page at its root and the API under `api/`. */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void
  /** The token the default `authorize` checks; put it in the page's link after `#token=`. */
  readonly token: string
}

export interface InspectorOptions extends InspectorListenerOptions {
  /** Default 0: any free port. */
  port?: number
  /** Default 127.0.0.1: only this machine. */
  hostname?: string
}

export interface Inspector {
  /** The page's URL, with its token after `#` (so it never reaches a server log or a Referer). */
  readonly url: string
  readonly server: Server
  close(): Promise<void>
}

const here = dirname(fileURLToPath(import.meta.url))
const PUBLIC = join(here, '..', 'public')
const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/schema-form.js': { file: 'schema-form.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
}

/**
 * What every response of the inspector says to the browser: scripts, styles and requests
 * from this origin only (no inline script, no eval, no inline style attribute from data),
 * no plugins, no frames around it, forms post only here, no Referer.
 */
export const INSPECTOR_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': INSPECTOR_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}

/** The default rule: the token as a bearer header, compared in constant time. Never a query parameter (it would land in access logs). */
function tokenRule(token: string): Authorize {
  const expected = Buffer.from(token)
  return (request) => {
    const given = Buffer.from(request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '')
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
}

/**
 * The inspector as a request listener, to mount in your own `node:http` server (or under a
 * path of Express/Connect: the page uses relative URLs). It serves the page and
 * `@tanstack/ai-harness/http` under `api/`; every response carries {@link INSPECTOR_CSP}.
 */
export function inspectorListener(options: InspectorListenerOptions): InspectorListener {
  const token = options.token ?? randomBytes(18).toString('base64url')
  const onError = options.onError ?? ((error: unknown) => process.stderr.write(`inspector: ${String((error as Error)?.stack ?? error)}\n`))
  const api = toNodeListener(
    createHarnessHandler({
      host: options.host,
      basePath: '/api',
      pollMs: options.pollMs ?? 300,
      authorize: options.authorize ?? tokenRule(token),
      onError: (error) => onError(error),
    }),
  )
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value)
    // Mounted under a path (Express strips it into req.url), the handler still sees /api/….
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
    if (!asset || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found')
      return
    }
    readFile(join(PUBLIC, asset.file)).then(
      (body) =>
        res.writeHead(200, { 'content-type': asset.type, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body),
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('missing asset'),
    )
  }
  return { listener, token }
}

/**
 * Starts the inspector on its own `node:http` server: the page, and
 * `@tanstack/ai-harness/http` under `/api`. Every API request must carry the token
 * (`authorization: Bearer …`), unless you pass your own `authorize`.
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const { listener, token } = inspectorListener(options)
  const server = createServer(listener)
  const hostname = options.hostname ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, hostname, () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const shown = hostname.includes(':') ? `[${hostname}]` : hostname
  return {
    url: `http://${shown}:${port}/#token=${encodeURIComponent(token)}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
