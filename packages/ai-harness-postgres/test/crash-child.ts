/**
 * The process that `crash.test.ts` kills: `node --import tsx test/crash-child.ts`.
 *
 * It loads, prints `ready`, and waits for one task line (a `ChildTask` as JSON) on
 * stdin, so the parent can start it ahead of time and the kill timing does not include
 * start-up. Then it brings every session of the task to a finished turn, all at once:
 * a session whose turn never started gets `send('checkout oN')`, a cut turn is
 * resumed, a finished one is left alone. The first process on a fresh schema and every
 * process after a crash run the same code. It prints `done <ChildReport>` and exits,
 * or with `linger` waits for stdin to close (or for SIGKILL).
 *
 * While it works it prints `event` after each append that the store confirmed and
 * after each billing call that committed, so the parent can aim its kill at a point of
 * the work whatever the speed of the machine.
 */
import { createInterface } from 'node:readline'
import { createHost, type HarnessStore, type Session } from '@tanstack/ai-harness'
import pg from 'pg'
import { postgresStore } from '../src/index.js'
import { type ChildReport, type ChildTask, checkoutHarness, orderIdOf, PgBilling, sessionIdOf } from './crash-support.js'
import { pgConfig } from './support.js'

const event = () => process.stdout.write('event\n')

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream) {
  }
}

async function finish(session: Session, orderId: string): Promise<ChildReport['actions'][number]> {
  const neededRecovery = session.needsRecovery
  const entries = await session.entries()
  let action: ChildReport['actions'][number]['action'] = 'none'
  if (!entries.some((e) => e.record.type === 'harness.turn.started')) {
    action = 'send'
    await drain(session.send(`checkout ${orderId}`))
  } else if (session.needsRecovery) {
    action = 'resume'
    await drain(session.resume())
  }
  return { sessionId: session.id, action, neededRecovery }
}

/** The pool is connected before `ready`, so the kill window holds work, not connection set-up. */
const POOL_SIZE = 8
const pool = new pg.Pool({ ...pgConfig(), max: POOL_SIZE, idleTimeoutMillis: 0 })
pool.on('error', () => {}) // an idle connection lost: the next query reconnects

async function run(task: ChildTask): Promise<ChildReport> {
  const started = performance.now()
  const postgres = postgresStore({ client: pool, schema: task.schema })
  const store: HarnessStore = {
    ...postgres,
    append: async (logId, expectedSeq, records) => {
      const result = await postgres.append(logId, expectedSeq, records)
      event()
      return result
    },
  }
  const billing = new PgBilling(pool, task.schema, () => Math.random() * 3, event)
  const host = createHost({ store, harnesses: checkoutHarness(billing), hostId: task.hostId, leaseMs: task.leaseMs })
  const actions = await Promise.all(
    Array.from({ length: task.sessions }, async (_, i) => {
      const session = await host.open({ sessionId: sessionIdOf(i) })
      try {
        return await finish(session, orderIdOf(i))
      } finally {
        await session.close()
      }
    }),
  )
  await pool.end()
  return { ms: performance.now() - started, actions }
}

const warm = await Promise.all(Array.from({ length: POOL_SIZE / 2 }, () => pool.connect()))
for (const client of warm) client.release()
const lines = createInterface({ input: process.stdin })
const next = lines[Symbol.asyncIterator]()
process.stdout.write('ready\n')
const first = await next.next()
if (first.done) process.exit(0) // a spare process the parent did not need
try {
  const task = JSON.parse(first.value) as ChildTask
  const report = await run(task)
  process.stdout.write(`done ${JSON.stringify(report)}\n`)
  if (task.linger) while (!(await next.next()).done) {}
  process.exit(0)
} catch (error) {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
}
