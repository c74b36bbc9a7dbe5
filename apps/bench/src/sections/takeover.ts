import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { EXPIRY_ONLY_LEASE_MS } from '@tanstack/ai-harness/store'
import { progress } from '../progress.js'
import type { TakeoverPhase, TakeoverRow } from '../report/result.js'
import { median, ratio, round } from '../stats.js'
import type { Target } from '../targets/target.js'
import type { TakeoverJob } from './takeover-child.js'

const CHILD = fileURLToPath(new URL('./takeover-child.js', import.meta.url))
const BARE_CHILD = fileURLToPath(new URL('./pglite-bare-child.js', import.meta.url))
/** The host's default lease, which a crashed host's sessions waited out before liveness. */
const HOST_LEASE_MS = 30_000
/** The goal on the stores that prove a dead host dead. */
const GOAL_MS = 1_000
/** The marks of a running worker's resume that its row keeps: its last calls before the step. */
const RUNNING_MARKS = 14
/** Graceful stops per store: the row is their median. */
const GRACEFUL_TRIALS = 5

/** A process's `performance.now()` as ms since the epoch, comparable with a child's `at` marks. */
const epoch = (at: number) => performance.timeOrigin + at

/** A takeover process, and when each of its lines came. */
class Child {
  readonly proc: ChildProcess
  /** When it was spawned (this process's `performance.now()`). */
  readonly spawnedAt: number
  /** Its `at <phase> <epoch ms>` marks, in order. */
  readonly marks: Array<{ phase: string; at: number }> = []
  readonly #seen = new Map<string, number>()
  readonly #waiting = new Map<string, (at: number) => void>()
  #stderr = ''
  constructor(job: TakeoverJob, script = CHILD) {
    this.spawnedAt = performance.now()
    this.proc = spawn(process.execPath, [script, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] })
    this.proc.stderr?.on('data', (data: Buffer) => {
      this.#stderr += data.toString()
    })
    createInterface({ input: this.proc.stdout! }).on('line', (line) => {
      const at = performance.now()
      const marked = /^at (.+) (\d+(?:\.\d+)?)$/.exec(line)
      if (marked) this.marks.push({ phase: marked[1]!, at: Number(marked[2]) })
      if (!this.#seen.has(line)) this.#seen.set(line, at)
      this.#waiting.get(line)?.(at)
    })
  }
  /** When `line` came (waiting for it at most `ms`). */
  line(line: string, ms: number): Promise<number> {
    const seen = this.#seen.get(line)
    if (seen !== undefined) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "${line}" from a takeover child within ${ms} ms:\n${this.#stderr}`)), ms)
      this.proc.once('exit', (code) => reject(new Error(`a takeover child exited (${code}) before "${line}":\n${this.#stderr}`)))
      this.#waiting.set(line, (at) => {
        clearTimeout(timer)
        resolve(at)
      })
    })
  }
  /** Its marks up to the first `upTo`, as ms after `from` (this process's `performance.now()`). */
  phasesAfter(from: number, upTo: string): TakeoverPhase[] {
    const end = this.marks.findIndex((m) => m.phase === upTo)
    return this.marks.slice(0, end < 0 ? undefined : end + 1).map((m) => ({ phase: m.phase, ms: round(m.at - epoch(from), 1) }))
  }
  /** SIGTERM (a graceful stop); returns the time of the signal. */
  term(): number {
    this.proc.kill('SIGTERM')
    return performance.now()
  }
  /** SIGKILL; resolves with the time of the kill once the process is gone. */
  async kill(): Promise<number> {
    const exited = new Promise((resolve) => this.proc.once('exit', resolve))
    this.proc.kill('SIGKILL')
    const at = performance.now()
    await exited
    return at
  }
}

/** From SIGTERM of a driver inside a step (it calls `host.shutdown()`) to the step starting again in a running worker. */
async function gracefulStop(start: (job: Omit<TakeoverJob, 'connection'>) => Child, waitMs: number): Promise<number> {
  const sessionId = `graceful-${randomUUID()}`
  const driver = start({ slot: 'web-2', role: 'drive', sessionId })
  const peer = start({ slot: 'worker-2', role: 'resume', sessionId, finishSteps: true })
  await Promise.all([driver.line('ready', waitMs), peer.line('ready', waitMs)])
  await driver.line(`invoice of ${sessionId}`, waitMs)
  const termed = driver.term()
  const resumed = (await peer.line(`invoice of ${sessionId}`, waitMs)) - termed
  await Promise.all([driver.proc.exitCode === null ? driver.kill() : undefined, peer.kill()])
  return resumed
}

/** A bare PGlite process on the folder (`new PGlite(dir)` and one query), against the restarted slot's time from its own spawn. */
async function bareStart(
  start: (job: TakeoverJob, script?: string) => Child,
  job: TakeoverJob,
  oursFromSpawnMs: number,
  waitMs: number,
): Promise<NonNullable<TakeoverRow['bare']>> {
  const bare = start(job, BARE_CHILD)
  await bare.line('closed', waitMs)
  const phases = bare.phasesAfter(bare.spawnedAt, 'loop')
  // To its event loop's first turn after the query, as the slot's time runs through its own.
  const startMs = phases.find((p) => p.phase === 'loop')?.ms ?? Number.NaN
  progress(
    `  pglite: bare PGlite start ${round(startMs, 0)} ms (${phases.map((p) => `${p.phase} ${p.ms}`).join(', ')}); ours from spawn ${round(oursFromSpawnMs, 0)} ms`,
  )
  return { startMs: round(startMs, 1), phases, oursFromSpawnMs: round(oursFromSpawnMs, 1), ratio: ratio(oursFromSpawnMs, startMs) }
}

/** The hooks a PGlite target has: a child can open its folder only while this process has it closed. */
interface Suspendable {
  suspend(): Promise<void>
  reopen(): Promise<void>
}
const suspendable = (target: Target): target is Target & Suspendable => 'suspend' in target

/**
 * Recovery latency: a process drives a session into a step that never returns and is
 * SIGKILLed there; the time is from the kill to the step's function starting again in
 * another process. "running worker": a worker process was already up (not on PGlite,
 * whose folder has one process at a time). "restarted slot": a process with the killed
 * one's id starts after the kill; its time includes its start, and `afterReadyMs` is the
 * part after its store was open. "graceful stop": a driver of another session gets SIGTERM
 * inside the step and calls `host.shutdown()`; the time is from the signal to the step
 * starting again in a worker process that was up (not on PGlite).
 */
export async function measureTakeover(target: Target): Promise<TakeoverRow[]> {
  const leaseMs = target.name === 'dynamodb' || target.name === 's3' ? EXPIRY_ONLY_LEASE_MS : HOST_LEASE_MS
  const proves = leaseMs === HOST_LEASE_MS
  const waitMs = 3 * leaseMs + 15_000
  const job = (slot: string, role: TakeoverJob['role'], sessionId: string): TakeoverJob => ({
    connection: target.childConnection(),
    sessionId,
    slot,
    role,
  })
  const row = (scenario: TakeoverRow['scenario'], afterKillMs: number, afterReadyMs: number | null): TakeoverRow => {
    progress(`  ${target.name}: ${scenario}: the step ran again ${round(afterKillMs, 0)} ms after the SIGKILL`)
    return {
      store: target.name,
      scenario,
      afterKillMs: round(afterKillMs, 1),
      afterReadyMs: afterReadyMs === null ? null : round(afterReadyMs, 1),
      leaseMs,
      ofLease: ratio(afterKillMs, leaseMs),
      // A graceful stop releases the lease: on every store it should not wait for one.
      goalMs: proves || scenario === 'graceful stop' ? GOAL_MS : leaseMs,
    }
  }
  const children: Child[] = []
  const start = (j: TakeoverJob, script?: string) => {
    const child = new Child(j, script)
    children.push(child)
    return child
  }
  const rows: TakeoverRow[] = []
  if (suspendable(target)) await target.suspend()
  try {
    const sessionId = `takeover-${randomUUID()}`
    const driver = start(job('web-1', 'drive', sessionId))
    const peer = suspendable(target) ? undefined : start(job('worker-1', 'resume', sessionId))
    await Promise.all([driver.line('ready', waitMs), peer?.line('ready', waitMs)])
    await driver.line('step invoice', waitMs)
    let killed = await driver.kill()
    if (peer) {
      const resumedAt = await peer.line('step invoice', waitMs)
      // Its last marks before the step: the resume (the worker's earlier polls are left out).
      const phases = peer
        .phasesAfter(killed, 'step')
        .filter((p) => p.ms >= 0)
        .slice(-RUNNING_MARKS)
      progress(`  ${target.name}: running worker, ms after the kill: ${phases.map((p) => `${p.phase} ${p.ms}`).join(', ')}`)
      rows.push({ ...row('running worker', resumedAt - killed, null), phases })
      // The worker drives the session now, inside the same endless step: its slot is the one to restart.
      killed = await peer.kill()
    }
    const restarted = start(job(peer ? 'worker-1' : 'web-1', 'resume', sessionId))
    const stepAt = await restarted.line('step invoice', waitMs)
    const phases = restarted.phasesAfter(killed, 'step')
    progress(`  ${target.name}: restarted slot, ms after the kill: ${phases.map((p) => `${p.phase} ${p.ms}`).join(', ')}`)
    const slotRow: TakeoverRow = { ...row('restarted slot', stepAt - killed, stepAt - (await restarted.line('ready', 0))), phases }
    rows.push(slotRow)
    if (!peer) {
      // PGlite's own start, alone, on the same folder after the same kind of kill: how much of the slot's time is ours.
      await restarted.kill()
      slotRow.bare = await bareStart(start, job('bare', 'resume', sessionId), stepAt - restarted.spawnedAt, waitMs)
    }
    if (peer) {
      await restarted.kill()
      // One stop lands anywhere in the worker's poll period: the median of a few says more than one.
      const stops: number[] = []
      for (let trial = 0; trial < GRACEFUL_TRIALS; trial++)
        stops.push(await gracefulStop((j) => start({ ...j, connection: target.childConnection() }), waitMs))
      progress(`  ${target.name}: graceful stops: ${stops.map((ms) => round(ms, 0)).join(', ')} ms`)
      rows.push({ ...row('graceful stop', median(stops), null), trialsMs: stops.map((ms) => round(ms, 1)) })
    }
  } finally {
    await Promise.all(children.map((child) => (child.proc.exitCode === null && child.proc.signalCode === null ? child.kill() : undefined)))
    if (suspendable(target)) await target.reopen()
  }
  return rows
}
