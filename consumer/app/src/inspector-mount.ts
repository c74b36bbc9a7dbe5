/**
 * `node dist/src/inspector-mount.js`: the inspector mounted in the app's own `node:http`
 * server under `/ops/`, with the app's own authorize (a tenant scope), on a memory store.
 * Prints one JSON line: what the page and the API answered.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHost } from '@tanstack/ai-harness'
import type { Authorize } from '@tanstack/ai-harness/http'
import { inspectorListener } from '@tanstack/ai-harness-inspector'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { checkoutHarness } from './checkout.js'
import { fileBilling } from './billing.js'

const store = memoryStore()
await store.append('tenant-a/order-1', 1, [{ type: 'app.note' }])
await store.append('tenant-b/order-1', 1, [{ type: 'app.note' }])
const host = createHost({ store, harnesses: checkoutHarness(fileBilling(`${process.cwd()}/mount-ledger.jsonl`)) })
// The app's rule: its own header names the tenant, who sees only its sessions.
const authorize: Authorize = (request) => (request.headers.get('x-tenant') === 'a' ? { prefix: 'tenant-a/' } : false)
const { listener } = inspectorListener({ host, authorize })
const server = createServer((req, res) => {
  if (!req.url?.startsWith('/ops/')) return void res.writeHead(404).end()
  req.url = req.url.slice('/ops'.length)
  listener(req, res)
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops`
const page = await fetch(`${origin}/`)
const html = await page.text()
const script = await fetch(`${origin}/app.js`)
const listed = await fetch(`${origin}/api/sessions`, { headers: { 'x-tenant': 'a' } })
const refused = await fetch(`${origin}/api/sessions`)
console.log(
  JSON.stringify({
    page: page.status,
    csp: page.headers.get('content-security-policy')?.includes("script-src 'self'") ?? false,
    loadsScripts: html.includes('src="app.js"'),
    script: script.status,
    sessions: await listed.json(),
    refused: refused.status,
  }),
)
server.close()
