/**
 * A worker process of `workers.test.ts`: `node --import tsx test/worker-child.ts '<WorkerTask JSON>'`.
 *
 * It connects, prints `ready`, and runs `createWorker(...).start()` on the run's schema
 * until its stdin closes; then it stops the worker (waiting for the current poll), ends
 * its pool, prints `stopped` and exits 0. Or it is killed with SIGKILL.
 *
 * Lines on stdout, for the parent:
 * - `step <idempotency key>` when a step's function starts (a billing call follows),
 *   so the parent can aim its kill inside a step;
 * - `error <session id> <code> <message>` for each failure the worker reports (a lost
 *   lease, a conflict): the parent prints them.
 *
 * With `wakeupLatencyMs` in the task, every wakeup write of the worker is that much
 * slower (a slow network to the database, a paused process).
 */
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { createWorker, type HarnessStore } from '@tanstack/ai-harness'
import pg from 'pg'
import { postgresStore } from '../src/index.js'
import { PgBilling } from './crash-support.js'
import { pgConfig } from './support.js'
import { errandHarness, type WorkerTask } from './workers-support.js'

const task = JSON.parse(process.argv[2] ?? '') as WorkerTask
const say = (line: string) => process.stdout.write(`${line}\n`)

const POOL_SIZE = 8
const pool = new pg.Pool({ ...pgConfig(), max: POOL_SIZE, idleTimeoutMillis: 0 })
pool.on('error', () => {}) // an idle connection lost: the next query reconnects

const postgres = postgresStore({ client: pool, schema: task.schema })
// A slow link to the wakeups table, when the task asks for one: each wakeup write
// (schedule, cancel) takes that much longer to reach the database.
const slow = task.wakeupLatencyMs ?? 0
const store: HarnessStore =
  slow > 0 && postgres.wakeups
    ? {
        ...postgres,
        wakeups: {
          ...postgres.wakeups,
          schedule: async (logId, at) => {
            await sleep(slow)
            await postgres.wakeups!.schedule(logId, at)
          },
          cancel: async (logId) => {
            await sleep(slow)
            await postgres.wakeups!.cancel(logId)
          },
        },
      }
    : postgres
// Network time on each side of a billing call: a step's function takes 100-240 ms, so a
// kill aimed just after `step` lands inside it (before or after the effect commits).
const billing = new PgBilling(pool, task.schema, () => 50 + Math.random() * 70)
const harness = errandHarness({ billing, by: task.workerId, onStep: (key) => say(`step ${key}`) })
const worker = createWorker({
  store,
  harnesses: harness,
  workerId: task.workerId,
  pollMs: task.pollMs,
  leaseMs: task.leaseMs,
  holdMs: task.holdMs,
  batchSize: task.batchSize,
  // A parker that raced its answer can leave the session waiting; the sweep finds it. Its default
  // (60 s) is past the watch of the tests, so they sweep every 2 s.
  sweepMs: 2_000,
  onError: (sessionId, error) => {
    const code = (error as { code?: string }).code ?? 'ERROR'
    const message = error instanceof Error ? error.message : String(error)
    say(`error ${sessionId} ${code} ${message.replace(/\s+/g, ' ')}`)
  },
})

const warm = await Promise.all(Array.from({ length: POOL_SIZE }, () => pool.connect()))
for (const client of warm) client.release()
say('ready')
worker.start()

// The parent closes stdin to stop the worker gracefully.
createInterface({ input: process.stdin }).on('close', async () => {
  try {
    await worker.stop()
    await pool.end()
    say('stopped')
    process.exit(0)
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  }
})
