/**
 * One process of the recovery-latency section: `node takeover-child.js '<TakeoverJob JSON>'`.
 * It opens the store, makes its host (`drive`) or worker (`resume`), prints `ready`, and
 * then drives the job's session into a step that never returns, or resumes sessions as a
 * worker with its default timings. `step <name>` is printed when a step's function starts.
 * On SIGTERM a driver calls `host.shutdown()`, prints `stopped` and exits.
 */
import { createServer } from 'node:http'
import { toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { childAccess } from '../targets/child-access.js'
import { markedStore } from './marked-store.js'
import type { ChildConnection } from '../targets/target.js'

export interface TakeoverJob {
  connection: ChildConnection
  sessionId: string
  /** The process slot: the host id of `drive`, the worker id of `resume`. */
  slot: string
  role: 'drive' | 'resume'
  /** The invoice step returns at once here (the graceful stop's worker): its polls must not hang on an earlier scenario's session. */
  finishSteps?: boolean
}

const job = JSON.parse(process.argv[2] ?? '') as TakeoverJob
// A worker process as docs/sessions-hosts-workers.md deploys one: its health-check server
// listens first, so the event loop is held while PGlite starts (an idle loop makes Node wait
// for V8's background compile of PGlite's WASM, 0.2-0.3 s here). Closed with the process.
createServer((_, response) => response.end('ok')).listen(0, '127.0.0.1')
const print = (line: string) => process.stdout.write(`${line}\n`)
// Where a restarted slot's time goes: `at <phase> <epoch ms>` lines, read by the parent against the kill.
const mark = (phase: string) => print(`at ${phase} ${performance.timeOrigin + performance.now()}`)
print(`at process ${performance.timeOrigin}`)
mark('modules')

// A charge that lands, then an invoice call that hangs: the driver is killed inside it.
const pay = durableTool(
  toolDefinition({ name: 'pay', description: 'Charge, then send the invoice', inputSchema: z.object({ order: z.string() }) }),
  async ({ order }, { step }) => {
    const charge = await step.do(`charge:${order}`, async () => {
      print('step charge')
      return { id: `ch_${order}` }
    })
    await step.do(`invoice:${charge.id}`, ({ signal }) => {
      mark('step')
      print('step invoice')
      // Which session: a worker may resume an earlier scenario's session too.
      print(`invoice of ${order}`)
      if (job.finishSteps) return Promise.resolve()
      // It never returns on its own; a graceful stop aborts it, so nothing is logged and the next driver runs it again.
      return new Promise<void>((_, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true }))
    })
    return { charged: charge.id }
  },
)
const harness = defineHarness({
  name: 'takeover',
  adapter: scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user' ? { text: '', toolCalls: [{ name: 'pay', args: { order: job.sessionId } }] } : 'Paid.',
  ),
  tools: [pay],
})

const access = await childAccess(job.connection, mark)
mark('client')
const store = markedStore(access.createStore(), mark)
mark('store')
const host = job.role === 'drive' ? createHost({ store, harnesses: harness, hostId: job.slot }) : undefined
const worker = job.role === 'resume' ? createWorker({ store, harnesses: harness, workerId: job.slot }) : undefined
// The SQL stores prepare their statements here, as an app's start-up would.
await (store as { migrate?: () => Promise<unknown> }).migrate?.()
mark('migrated')
print('ready')
if (host) {
  process.on('SIGTERM', () => {
    void host.shutdown().finally(() => {
      print('stopped')
      process.exit(0)
    })
  })
  const session = await host.open({ sessionId: job.sessionId })
  // A graceful stop ends the turn's stream with LEASE_LOST: the session is handed off, not failed.
  try {
    for await (const _ of session.send('pay')) {
    }
  } catch {}
}
if (worker) mark('worker start')
worker?.start()
// The event loop's first turn after the start: Node drains V8's background work (PGlite's WASM compile) before it when nothing else holds the loop.
if (worker) setImmediate(() => mark('loop'))
