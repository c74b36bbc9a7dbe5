/**
 * Back in under a second after SIGKILL: a process drives a session into a step that never
 * ends and is killed there; the test times how long until the step's function starts again
 * in another process, with no lease expiry waited for (leases are 30 s, the default).
 *
 * - pg: a worker process is already running; it finds the dead host's session through
 *   `leases.orphans` (the host's liveness lock was freed when its connection died) and
 *   resumes it. Then the same for a restart of the killed process's slot (same host id).
 * - pg, graceful: the driver gets SIGTERM inside a step and calls `host.shutdown()`: the
 *   lease is released and the session is due at once; the schedule's NOTIFY tells a running
 *   worker, which takes it without waiting for its next poll or a lease, and runs the step
 *   that was in flight again (it has no logged value).
 * - PGlite: only one process can have the folder open, so the next process is a restart of
 *   the slot; it opens the folder (the dead pid's lock is taken over), and every lease in it
 *   is a dead holder's. Its takeover (from the store being open to the step) is timed apart
 *   from PGlite's own start, which no design of the store can shorten.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, afterEach, expect, it } from 'vitest'
import { lockDataDir } from '../src/index.js'
import { LineChild } from './line-child.js'
import { freshSchema, pgConfig } from './support.js'
import type { TakeoverTask } from './takeover-support.js'

/**
 * A bound far under one lease (30 s): the takeover never waits a lease out. The goal
 * itself (under 1 s from the kill to the step starting again elsewhere) is measured by
 * the bench's takeover section; a test keeps to what a loaded CI machine meets, and logs
 * what it measured.
 */
const NO_LEASE_WAIT_MS = 5_000
const LEASE_MS = 30_000

/** A takeover process: remembers when each line came. */
class TakeoverChild extends LineChild {
  readonly lines: Array<{ line: string; at: number }> = []
  #waiters: Array<() => void> = []
  constructor(task: TakeoverTask) {
    super('takeover-child.ts', [JSON.stringify(task)], `takeover ${task.role} ${task.hostId}`)
    this.onLine = (line) => {
      this.lines.push({ line, at: performance.now() })
      for (const wake of this.#waiters.splice(0)) wake()
    }
  }
  /** The time the line came, waiting for it for at most `ms`. */
  async line(text: string, ms = 60_000): Promise<number> {
    const deadline = performance.now() + ms
    for (;;) {
      const found = this.lines.find((l) => l.line === text)
      if (found) return found.at
      if (performance.now() > deadline) throw new Error(`no "${text}" within ${ms} ms; stderr:\n${this.stderr}`)
      await Promise.race([new Promise<void>((resolve) => this.#waiters.push(resolve)), new Promise((r) => setTimeout(r, 200))])
    }
  }
  kill(): number {
    this.proc.kill('SIGKILL')
    return performance.now()
  }
}

const children: TakeoverChild[] = []
const start = (task: TakeoverTask) => {
  const child = new TakeoverChild(task)
  children.push(child)
  return child
}
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const child of children.splice(0)) child.proc.kill('SIGKILL')
  for (const cleanup of cleanups.splice(0)) await cleanup()
})
const admin = new pg.Pool({ ...pgConfig(), max: 1 })
afterAll(() => admin.end())

it('pg: a running worker resumes a SIGKILLed host at once; so does a restart of its slot', async () => {
  const schema = freshSchema('takeover')
  cleanups.push(async () => void (await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)))
  const task = { store: 'pg', schema, sessionId: 'order-1' } as const
  const driver = start({ ...task, hostId: 'web-1', role: 'drive' })
  await driver.ready
  const worker = start({ ...task, hostId: 'worker-1', role: 'resume' })
  await worker.ready
  await driver.line('step endless web-1')
  const killed = driver.kill()
  const resumedMs = (await worker.line('step endless worker-1', LEASE_MS)) - killed
  console.log(`takeover (pg): a running worker started the step again ${resumedMs.toFixed(0)} ms after the SIGKILL`)
  expect(resumedMs).toBeLessThan(NO_LEASE_WAIT_MS)
  expect(
    worker.lines.some((l) => l.line === 'step first worker-1'),
    'the logged step is not run again',
  ).toBe(false)

  // The slot of the killed worker restarts with the same id: it takes its session back at once.
  const killedWorker = worker.kill()
  const restarted = start({ ...task, hostId: 'worker-1', role: 'resume' })
  const again = (await restarted.line('step endless worker-1', LEASE_MS)) - killedWorker
  const readyAt = await restarted.line('opened')
  console.log(
    `takeover (pg): the restarted slot started the step ${again.toFixed(0)} ms after the SIGKILL (${(again - (readyAt - killedWorker)).toFixed(0)} ms after its store was open)`,
  )
  expect(again).toBeLessThan(LEASE_MS / 3)
}, 120_000)

it('PGlite: a restart of the slot opens the folder of the SIGKILLed process and resumes its session at once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'takeover-pglite-'))
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
  const task = { store: 'pglite', dataDir, sessionId: 'order-1' } as const
  const driver = start({ ...task, hostId: 'cli-1', role: 'drive' })
  await driver.ready
  await driver.line('step endless cli-1')
  // The driver's store holds the folder: no second process may open it while it lives.
  expect(() => lockDataDir(dataDir)).toThrow(expect.objectContaining({ code: 'STORE_LOCKED', pid: driver.proc.pid }))
  const killed = driver.kill()
  await driver.exited
  const restarted = start({ ...task, hostId: 'cli-1', role: 'resume' })
  const stepAt = await restarted.line('step endless cli-1', LEASE_MS)
  const readyAt = await restarted.line('opened')
  const takeoverMs = stepAt - readyAt
  console.log(
    `takeover (PGlite): the step ran again ${(stepAt - killed).toFixed(0)} ms after the SIGKILL, ${takeoverMs.toFixed(0)} ms after the restarted process had the store open`,
  )
  expect(takeoverMs).toBeLessThan(NO_LEASE_WAIT_MS)
  expect(stepAt - killed).toBeLessThan(LEASE_MS)
}, 120_000)

it('pg: SIGTERM and host.shutdown() hand the session to a running worker within one poll', async () => {
  const schema = freshSchema('takeover_term')
  cleanups.push(async () => void (await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)))
  const task = { store: 'pg', schema, sessionId: 'order-2' } as const
  const driver = start({ ...task, hostId: 'web-2', role: 'drive' })
  const worker = start({ ...task, hostId: 'worker-2', role: 'resume' })
  await Promise.all([driver.ready, worker.ready])
  await driver.line('step first web-2')
  driver.proc.kill('SIGTERM')
  const termAt = performance.now()
  await driver.line('stopped', 15_000)
  const stoppedMs = (await driver.line('stopped')) - termAt
  const resumedMs = (await worker.line('step endless worker-2', LEASE_MS)) - termAt
  console.log(
    `graceful stop (pg): the driver was out ${stoppedMs.toFixed(0)} ms after SIGTERM; the worker started the next step ${resumedMs.toFixed(0)} ms after it`,
  )
  // The stop waits for the step in flight (300 ms, under stopTimeoutMs) and logs its value: the worker never runs it again.
  expect(worker.lines.some((l) => l.line === 'step first worker-2')).toBe(false)
  // The step in flight (300 ms) and one poll of the worker (1 s), never a lease (30 s).
  expect(resumedMs).toBeLessThan(300 + 1_000 + NO_LEASE_WAIT_MS)
}, 120_000)
