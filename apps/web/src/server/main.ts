/**
 * One server process of the web app: a host and a worker on the shared PostgreSQL, the chat
 * route of `@tanstack/ai-harness/http`, the page, and billing's ledger as JSON. Started twice
 * by the app (src/app.ts), behind its round-robin proxy. Its settings come from the
 * environment: the `PG*` variables, `WEB_SERVER` (its name), `WEB_SCHEMA`, `WEB_GATES` and
 * `WEB_WORD_MS` (see pause.ts). Prints `listening <port>` once it takes requests.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createHost, createWorker } from '@tanstack/ai-harness'
import { createChatRoute } from '@tanstack/ai-harness/http'
import { toNodeListener } from '@tanstack/ai-harness/http/node'
import { postgresStore } from '@tanstack/ai-harness-postgres'
import pg from 'pg'
import { Billing } from './billing.js'
import { pauses } from './pause.js'
import { shopHarness } from './shop.js'

const name = process.env.WEB_SERVER ?? 'a'
const schema = process.env.WEB_SCHEMA ?? 'web'
const pool = new pg.Pool({ max: 8 })
pool.on('error', () => {})
const billing = new Billing(pool, schema)
const harness = shopHarness(billing, pauses(process.env.WEB_GATES || undefined), Number(process.env.WEB_WORD_MS ?? 40))
const store = postgresStore({ client: pool, schema })
const host = createHost({ store, harnesses: harness, hostId: `server-${name}-${process.pid}` })
// Each server also runs a worker: it takes over the turns of a server that died, and runs what nobody drives.
const worker = createWorker({ store, harnesses: harness, workerId: `worker-${name}-${process.pid}`, pollMs: 200 })
worker.start()

// The sessions of this demo are ids the browser makes (`web-<uuid>`); a real app checks its user's cookie here.
const route = createChatRoute({
  host,
  authorize: (_request, sessionId) => /^web-[0-9a-f-]{36}$/.test(sessionId),
  onError: (error) => console.error(`server ${name}: a turn failed: ${(error as Error).message}`),
})

const page = (file: string, type: string) => ({ body: readFileSync(new URL(`../public/${file}`, import.meta.url)), type })
const files: Record<string, { body: Buffer; type: string }> = {
  '/': page('index.html', 'text/html; charset=utf-8'),
  '/app.js': page('app.js', 'text/javascript; charset=utf-8'),
  '/style.css': page('style.css', 'text/css; charset=utf-8'),
}

async function handle(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url)
  const response = await respond(request, pathname)
  response.headers.set('X-Served-By', name)
  return response
}

async function respond(request: Request, pathname: string): Promise<Response> {
  if (pathname === '/api/chat') return request.method === 'POST' ? route.POST(request) : route.GET(request)
  if (pathname === '/api/billing') return Response.json(await billing.calls(), { headers: { 'Cache-Control': 'no-store' } })
  const file = request.method === 'GET' ? files[pathname] : undefined
  if (!file) return new Response('not found', { status: 404 })
  return new Response(new Uint8Array(file.body), {
    headers: { 'Content-Type': file.type, 'Content-Security-Policy': "default-src 'self'; frame-ancestors 'none'" },
  })
}

const server = createServer(toNodeListener(handle))
server.listen(Number(process.env.WEB_PORT ?? 0), '127.0.0.1', () => {
  const address = server.address()
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`)
})

// A deploy (SIGTERM): hand the turns off at a step boundary, so the other server's worker goes on with them.
process.once('SIGTERM', async () => {
  server.close()
  await worker.stop()
  await host.shutdown()
  await pool.end()
  process.exit(0)
})
