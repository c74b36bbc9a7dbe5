/**
 * A process of `takeover.test.ts`: `node --import tsx test/takeover-child.ts '<TakeoverTask JSON>'`.
 *
 * It opens the store (pg: a pool on the task's schema; PGlite: the task's data folder),
 * prints `ready`, and then, as `drive`, opens the session and sends the prompt, or, as
 * `resume`, runs a worker. The one tool logs a step, then starts a second step that never
 * ends: `step <name> <process>` is printed when a step's function starts, so the parent can
 * kill the driver inside it and time when the next process starts it again.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { PGlite } from '@electric-sql/pglite'
import { createHost, createWorker } from '@tanstack/ai-harness'
import pg from 'pg'
import { postgresStore } from '../src/index.js'
import { pgConfig } from './support.js'
import { takeoverHarness, type TakeoverTask } from './takeover-support.js'

const task = JSON.parse(process.argv[2] ?? '') as TakeoverTask
const say = (line: string) => process.stdout.write(`${line}\n`)

const client = task.store === 'pglite' ? new PGlite(task.dataDir) : new pg.Pool({ ...pgConfig(), max: 4, idleTimeoutMillis: 0 })
if (client instanceof pg.Pool) client.on('error', () => {})
const store = postgresStore({ client, schema: task.schema, closeClient: true })
const harness = takeoverHarness((name) => say(`step ${name} ${task.hostId}`))
// As an app starts: the host or worker is made while the store opens.
const host = task.role === 'drive' ? createHost({ store, harnesses: harness, hostId: task.hostId }) : undefined
const worker = task.role === 'resume' ? createWorker({ store, harnesses: harness, workerId: task.hostId, pollMs: 1_000 }) : undefined
await store.migrate()
say('opened')
say('ready')

// A graceful stop, as a deploy sends it: hand every turn off, then exit.
process.on('SIGTERM', async () => {
  await host?.shutdown()
  await worker?.stop()
  say('stopped')
  process.exit(0)
})

if (host) {
  const session = await host.open({ sessionId: task.sessionId })
  try {
    for await (const _ of session.send('go')) {
    }
  } catch (error) {
    // A graceful stop ends the stream with LEASE_LOST: this host hands the turn off.
    if ((error as { code?: string }).code !== 'LEASE_LOST') throw error
  }
} else {
  worker?.start()
}
await sleep(2 ** 31 - 1)
