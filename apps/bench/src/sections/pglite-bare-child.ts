/**
 * PGlite's own start, nothing of ours: `node pglite-bare-child.js '<TakeoverJob JSON>'` opens
 * the job's folder with `PGlite.create` and runs one query, marking each phase as the takeover
 * child does (`at <phase> <epoch ms>`), then its event loop's next turn; closes the database, prints `closed`.
 */
import { createServer } from 'node:http'
import type { TakeoverJob } from './takeover-child.js'

const job = JSON.parse(process.argv[2] ?? '') as TakeoverJob
// The same health-check server as the takeover child's, so both hold their loop alike.
const health = createServer((_, response) => response.end('ok')).listen(0, '127.0.0.1')
const print = (line: string) => process.stdout.write(`${line}\n`)
const mark = (phase: string) => print(`at ${phase} ${performance.timeOrigin + performance.now()}`)
print(`at process ${performance.timeOrigin}`)
if (job.connection.store !== 'pglite') throw new Error('the bare start is PGlite only')
const { PGlite } = await import('@electric-sql/pglite')
mark('pglite module')
const db = await PGlite.create(job.connection.dataDir)
mark('pglite open')
await db.query('SELECT 1')
mark('query')
// The loop's first turn after it: with nothing else holding the loop, Node first waits for V8's background compile of the WASM.
await new Promise((resolve) => setImmediate(resolve))
mark('loop')
await db.close()
health.close()
print('closed')
