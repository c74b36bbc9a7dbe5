/**
 * Crash test across real processes: a kill -9 at a random point of real work, which no
 * crash flag in one process can imitate (the OS drops the process's sockets mid-write).
 *
 * Each run: a fresh schema; a child process (`crash-child.ts`) runs SESSIONS durable
 * checkout sessions at once on PostgreSQL and is killed with SIGKILL at a point drawn
 * from the seed: after its k-th event (an append the store confirmed, or a billing call
 * that committed; the child prints one line each) and then a delay of up to
 * MAX_DELAY_MS while it goes on working, so where the kill lands is real timing, aimed
 * across the whole work whatever the speed of the machine. Some runs kill the process
 * that recovers, too. Then a fresh process reopens every session with the same host id
 * (so it re-acquires the lease at once) and finishes it. The billing service keeps its
 * state in PostgreSQL, so it survives the kill. Then, from the database alone: every
 * order charged and invoiced exactly once, every repeated attempt refused by its key,
 * every session finished, every log well-formed.
 *
 * Replay with the printed seed: CRASH_SEED=<seed> draws the same kill points (the
 * timing inside them is real, so a replay hits the same neighbourhood, not the same
 * instruction); add CRASH_RUN=<n> to run only run n. CRASH_RUNS=<n> changes the number of runs.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { type LogEntry, type LogRecord, readAll } from '@tanstack/ai-harness'
import pg from 'pg'
import { afterAll, expect, it } from 'vitest'
import { type PostgresStore, postgresStore } from '../src/index.js'
import {
  billingDdl,
  type ChildReport,
  type ChildTask,
  FINAL_ANSWER,
  orderIdOf,
  prng,
  type ReceiptRecord,
  sessionIdOf,
} from './crash-support.js'
import { freshSchema, pgConfig } from './support.js'

const SEED = process.env.CRASH_SEED ? Number(process.env.CRASH_SEED) : randomInt(2 ** 31)
const RUNS = Number(process.env.CRASH_RUNS ?? 24)
/** CRASH_RUN=<n> (with CRASH_SEED) runs only run n of that seed. */
const ONLY_RUN = process.env.CRASH_RUN ? Number(process.env.CRASH_RUN) : undefined
const SESSIONS = 4
const HOST_ID = 'crash-host'
const LEASE_MS = 30_000
/** Chance that the process which recovers is killed too, before a third one finishes. */
const SECOND_KILL = 0.35
const SPARE_CHILDREN = 3
/** The kill comes up to this long after the event it waits for, while the child goes on working. */
const MAX_DELAY_MS = 4

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const childScript = join(packageDir, 'test', 'crash-child.ts')

/** One child process, started ahead of time: it prints `ready` and waits for its task. */
class Child {
  readonly proc: ChildProcess
  readonly ready: Promise<void>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  report: ChildReport | undefined
  /** `event` lines so far: appends the store confirmed and billing calls that committed. */
  events = 0
  #waiting: { events: number; resolve: () => void } | undefined
  stderr = ''

  constructor() {
    this.proc = spawn(process.execPath, ['--import', 'tsx', childScript], { cwd: packageDir, stdio: ['pipe', 'pipe', 'pipe'] })
    this.proc.stdin?.on('error', () => {}) // writing to a killed process
    this.proc.stderr?.on('data', (data: Buffer) => {
      this.stderr += data.toString()
    })
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })))
    let ready: () => void = () => {}
    const readyLine = new Promise<void>((resolve) => {
      ready = resolve
    })
    createInterface({ input: this.proc.stdout! }).on('line', (line) => {
      if (line === 'ready') ready()
      else if (line === 'event') this.events++
      else if (line.startsWith('done ')) this.report = JSON.parse(line.slice('done '.length)) as ChildReport
      if (this.#waiting && (this.events >= this.#waiting.events || this.report)) this.#waiting.resolve()
    })
    this.exited.then(() => this.#waiting?.resolve())
    this.ready = Promise.race([
      readyLine,
      this.exited.then(({ code, signal }) => {
        throw new Error(`the child exited before it was ready (code ${code}, signal ${signal}):\n${this.stderr}`)
      }),
    ])
    this.ready.catch(() => {})
  }

  start(task: ChildTask): void {
    this.proc.stdin!.write(`${JSON.stringify(task)}\n`)
  }

  /** Resolves at the `events`-th event line, or when the child finished or exited first. */
  untilEvents(events: number): Promise<void> {
    if (this.events >= events || this.report) return Promise.resolve()
    return new Promise((resolve) => {
      this.#waiting = { events, resolve }
    })
  }
}

/**
 * Children started ahead of time: starting one takes ~0.35 s (tsx, module loading,
 * connecting) on an idle machine, so the kill timing starts when the task is sent.
 */
const spares: Child[] = []
async function takeChild(): Promise<Child> {
  const child = spares.shift() ?? new Child()
  await child.ready
  return child
}
function topUp(): void {
  while (spares.length < SPARE_CHILDREN) spares.push(new Child())
}

const admin = new pg.Pool({ ...pgConfig(), max: 4 })
admin.on('error', () => {})
const schemas = new Set<string>()

afterAll(async () => {
  for (const child of spares.splice(0)) {
    child.proc.stdin?.end()
    await child.exited
  }
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

async function freshRun(label: string): Promise<{ schema: string; store: PostgresStore }> {
  const schema = freshSchema(label)
  schemas.add(schema)
  const store = postgresStore({ client: admin, schema })
  await store.migrate()
  await admin.query(billingDdl(schema))
  return { schema, store }
}

async function dropRun(schema: string): Promise<void> {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  schemas.delete(schema)
}

const task = (schema: string, linger: boolean): ChildTask => ({ schema, sessions: SESSIONS, hostId: HOST_ID, leaseMs: LEASE_MS, linger })

/** Runs a child to its end; it must exit 0. */
async function runToEnd(schema: string): Promise<{ report: ChildReport; ms: number; events: number }> {
  const child = await takeChild()
  topUp()
  const started = performance.now()
  child.start(task(schema, false))
  const { code, signal } = await child.exited
  if (code !== 0 || !child.report) throw new Error(`the finishing child failed (code ${code}, signal ${signal}):\n${child.stderr}`)
  return { report: child.report, ms: performance.now() - started, events: child.events }
}

/**
 * Starts a child on the task, waits for its `afterEvents`-th event, then `delayMs` more
 * while it goes on working, and SIGKILLs it. Returns whether it had finished first.
 */
async function runAndKill(schema: string, afterEvents: number, delayMs: number): Promise<{ finishedFirst: boolean }> {
  const child = await takeChild()
  child.start(task(schema, true))
  await child.untilEvents(afterEvents)
  await sleep(delayMs)
  const finishedFirst = child.report !== undefined
  child.proc.kill('SIGKILL')
  const { code, signal } = await child.exited
  topUp()
  if (signal !== 'SIGKILL') throw new Error(`the child ended before the kill (code ${code}, signal ${signal}):\n${child.stderr}`)
  // The next process cannot know this one is dead, so it waits for its leases: let them run out now, as time would.
  await admin.query(`UPDATE "${schema}".harness_leases SET expires_at = 0`)
  return { finishedFirst }
}

interface BillingState {
  charges: Array<{ idempotency_key: string; charge_id: string; order_id: string }>
  invoices: Array<{ idempotency_key: string; charge_id: string }>
  attempts: Array<{ operation: string; idempotency_key: string; subject: string; outcome: string; pid: number }>
}

async function billingState(schema: string): Promise<BillingState> {
  const q = async <T>(table: string) => (await admin.query(`SELECT * FROM "${schema}".${table} ORDER BY 1`)).rows as T[]
  return {
    charges: await q('billing_charges'),
    invoices: await q('billing_invoices'),
    attempts: (await admin.query(`SELECT * FROM "${schema}".billing_attempts ORDER BY id`)).rows,
  }
}

const typeOf = (entry: LogEntry | undefined) => entry?.record.type
const toolCallsOf = (record: LogRecord) => (record.toolCalls ?? []) as Array<{ id: string; name: string; arguments: string }>

/** Where a kill left a session: the last thing in its log, or a side effect newer than the log. */
function cutPoint(sessionId: string, entries: readonly LogEntry[], billing: BillingState): string {
  const mine = (key: string) => key.startsWith(`${sessionId}:`)
  const stepLogged = (prefix: string) => entries.some((e) => e.record.type === 'harness.step' && String(e.record.name).startsWith(prefix))
  if (billing.invoices.some((i) => mine(i.idempotency_key)) && !stepLogged('invoice:')) return 'invoiced, step not logged'
  if (billing.charges.some((c) => mine(c.idempotency_key)) && !stepLogged('charge:')) return 'charged, step not logged'
  const last = entries.at(-1)
  switch (typeOf(last)) {
    case undefined:
      return 'nothing logged'
    case 'harness.session.opened':
      return 'opened'
    case 'harness.turn.started':
      return 'turn started'
    case 'harness.turn.resumed':
      return 'turn resumed'
    case 'harness.assistant':
      return 'tool call logged'
    case 'harness.step':
      return `${String(last!.record.name).split(':')[0]} step logged`
    case 'app.receipt':
    case 'harness.tool.result':
      return 'tool result logged'
    case 'harness.turn.finished':
      return 'finished'
    default:
      return `?${typeOf(last)}`
  }
}

/** Every invariant of a finished run, from the database alone. */
function checkRun(logs: Map<string, LogEntry[]>, billing: BillingState, processes: number, where: string): { refused: number } {
  const chargeKeys = new Map<string, string>() // key -> charge id, as the log says
  const invoiceKeys = new Set<string>()
  for (let i = 0; i < SESSIONS; i++) {
    const sessionId = sessionIdOf(i)
    const orderId = orderIdOf(i)
    const at = `${where} ${sessionId}`
    const entries = logs.get(sessionId) ?? []
    const types = entries.map((e) => e.record.type)
    // Well-formed: dense seqs, one opened record first, one turn, finished last.
    expect(
      entries.map((e) => e.seq),
      `${at}: dense seqs`,
    ).toEqual(entries.map((_, n) => n + 1))
    expect(types[0], `${at}: opened first`).toBe('harness.session.opened')
    expect(types.filter((t) => t === 'harness.session.opened').length, `${at}: opened once`).toBe(1)
    expect(types.filter((t) => t === 'harness.turn.started').length, `${at}: one turn`).toBe(1)
    expect(types.filter((t) => t === 'harness.turn.finished').length, `${at}: the turn finished once`).toBe(1)
    // Who drove the turn: this host each time, each process under a newer lease fence.
    const drivers = entries.filter((e) => e.record.type === 'harness.turn.started' || e.record.type === 'harness.turn.resumed')
    expect(drivers[0]?.record.type, `${at}: the turn starts before it is resumed`).toBe('harness.turn.started')
    expect(drivers.length, `${at}: resumed at most once per later process`).toBeLessThanOrEqual(processes)
    for (const d of drivers) {
      expect(d.record.turnId, `${at}: resumes the turn that started`).toBe(drivers[0]!.record.turnId)
      if ('host' in d.record) expect(d.record.host, `${at}: driven by this host`).toBe(HOST_ID)
    }
    const fences = drivers.map((d) => d.record.fence).filter((f) => typeof f === 'number')
    expect(fences, `${at}: each driver under a newer lease fence`).toEqual([...new Set(fences)].sort((a, b) => a - b))
    expect(types.at(-1), `${at}: finished last`).toBe('harness.turn.finished')
    const known = new Set([
      'harness.session.opened',
      'harness.turn.started',
      'harness.turn.resumed',
      'harness.assistant',
      'harness.step',
      'harness.tool.result',
      'harness.turn.finished',
      'app.receipt',
    ])
    expect(
      types.filter((t) => !known.has(t)),
      `${at}: only known record types`,
    ).toEqual([])
    const finalAnswer = entries.at(-2)?.record
    expect(finalAnswer?.type === 'harness.assistant' && finalAnswer.text, `${at}: the model's answer before the end`).toBe(FINAL_ANSWER)

    // Every tool call settled exactly once, after its call and with its steps before.
    const calls = entries.flatMap((e) =>
      e.record.type === 'harness.assistant' ? toolCallsOf(e.record).map((c) => ({ ...c, seq: e.seq })) : [],
    )
    expect(
      calls.map((c) => c.name),
      `${at}: one checkout call (the order is not placed twice)`,
    ).toEqual(['checkout'])
    const call = calls[0]!
    const results = entries.filter((e) => e.record.type === 'harness.tool.result')
    expect(
      results.map((e) => e.record.toolCallId),
      `${at}: each call settled once`,
    ).toEqual([call.id])
    const result = results[0]!
    expect(result.seq, `${at}: the result after its call`).toBeGreaterThan(call.seq)
    expect(result.record.ok, `${at}: the call succeeded`).toBe(true)
    expect(result.record.cut, `${at}: a durable call is run again, not cut`).toBe(false)
    const chargeId = (result.record.result as { chargeId?: string })?.chargeId
    expect(typeof chargeId, `${at}: the result holds the charge id`).toBe('string')
    const steps = entries.filter((e) => e.record.type === 'harness.step')
    expect(
      steps.map((e) => [e.record.toolCallId, e.record.name]),
      `${at}: each step logged once, in order`,
    ).toEqual([
      [call.id, `charge:${orderId}`],
      [call.id, `invoice:${chargeId}`],
    ])
    expect(steps[0]!.record.value, `${at}: the charge step holds the charge`).toEqual({ id: chargeId })
    for (const step of steps) expect(step.seq > call.seq && step.seq < result.seq, `${at}: steps between call and result`).toBe(true)
    // App records: once per call, in the result's batch (right after it).
    const receipts = entries.filter((e) => e.record.type === 'app.receipt')
    expect(
      receipts.map((e) => e.record as unknown as ReceiptRecord),
      `${at}: one receipt`,
    ).toEqual([{ type: 'app.receipt', orderId, chargeId, toolCallId: call.id }])
    expect(receipts[0]!.seq, `${at}: the receipt lands with the result`).toBe(result.seq + 1)
    chargeKeys.set(`${sessionId}:${call.id}:charge:${orderId}`, chargeId!)
    invoiceKeys.add(`${sessionId}:${call.id}:invoice:${chargeId}`)
  }

  // Every side effect once per idempotency key, and exactly the ones the logs name.
  expect(
    Object.fromEntries(billing.charges.map((c) => [c.idempotency_key, c.charge_id])),
    `${where}: one charge per order, under the logged key, with the logged id`,
  ).toEqual(Object.fromEntries(chargeKeys))
  expect(new Set(billing.charges.map((c) => c.order_id)).size, `${where}: no order charged twice`).toBe(SESSIONS)
  expect(billing.invoices.map((i) => i.idempotency_key).sort(), `${where}: one invoice per charge, under the logged key`).toEqual(
    [...invoiceKeys].sort(),
  )
  const byKey = new Map<string, string[]>()
  for (const a of billing.attempts) byKey.set(a.idempotency_key, [...(byKey.get(a.idempotency_key) ?? []), a.outcome])
  expect([...byKey.keys()].sort(), `${where}: attempts only for logged keys`).toEqual([...chargeKeys.keys(), ...invoiceKeys].sort())
  let refused = 0
  for (const [key, outcomes] of byKey) {
    expect(outcomes[0], `${where}: ${key}: the first attempt did it`).toBe('created')
    expect(
      outcomes.slice(1).every((o) => o === 'refused'),
      `${where}: ${key}: every retry refused, none repeated (${outcomes})`,
    ).toBe(true)
    expect(outcomes.length, `${where}: ${key}: at most one attempt per process`).toBeLessThanOrEqual(processes)
    refused += outcomes.length - 1
  }
  return { refused }
}

async function readLogs(store: PostgresStore): Promise<Map<string, LogEntry[]>> {
  const logs = new Map<string, LogEntry[]>()
  for (let i = 0; i < SESSIONS; i++) logs.set(sessionIdOf(i), await readAll(store, sessionIdOf(i)))
  return logs
}

it(`survives SIGKILL at random moments: ${RUNS} runs of ${SESSIONS} sessions (seed ${SEED})`, async () => {
  const started = performance.now()
  const random = prng(SEED)

  // A run with no kill counts the events of the work (appends and billing calls), and
  // checks the invariants without a crash: nothing retried.
  topUp()
  const calibration = await freshRun('crash_calibrate')
  const clean = await runToEnd(calibration.schema)
  expect(checkRun(await readLogs(calibration.store), await billingState(calibration.schema), 1, 'no kill').refused).toBe(0)
  await dropRun(calibration.schema)
  const events = clean.events
  console.log(
    `crash test: seed ${SEED}, ${RUNS} runs × ${SESSIONS} sessions; a clean run: ${events} events in ${clean.ms.toFixed(0)} ms\n` +
      `  replay: CRASH_SEED=${SEED} npx vitest run --project postgres test/crash.test.ts`,
  )

  const distribution = new Map<string, number>()
  let totalRefused = 0
  let kills = 0
  for (let run = 1; run <= RUNS; run++) {
    // Draw every random number of the run up front, so a replay draws the same ones: the
    // event after which the kill comes (0: before the first), and the time after it.
    const first = { afterEvents: Math.floor(random() * events), delayMs: random() * MAX_DELAY_MS }
    const second = random() < SECOND_KILL
    // The process that recovers has less to do.
    const again = { afterEvents: Math.floor((random() * events) / 2), delayMs: random() * MAX_DELAY_MS }
    const plan = second ? [first, again] : [first]
    if (ONLY_RUN !== undefined && run !== ONLY_RUN) continue
    const { schema, store } = await freshRun(`crash_${run}`)
    const at = (k: (typeof plan)[number]) => `event ${k.afterEvents} + ${k.delayMs.toFixed(1)} ms`
    const where = `CRASH_SEED=${SEED} CRASH_RUN=${run} (killed at ${plan.map(at).join(', then ')})`
    try {
      const points: string[] = []
      for (const kill of plan) {
        const { finishedFirst } = await runAndKill(schema, kill.afterEvents, kill.delayMs)
        kills++
        const logs = await readLogs(store)
        const billing = await billingState(schema)
        const cut = [...logs].map(([id, entries]) => cutPoint(id, entries, billing))
        for (const c of cut) distribution.set(c, (distribution.get(c) ?? 0) + 1)
        points.push(`${at(kill).padStart(18)}${finishedFirst ? ' (after done)' : ''}: ${cut.join(' | ')}`)
      }
      console.log(`run ${String(run).padStart(2)}: kill ${points.join('\n        kill ')}`)
      const { report } = await runToEnd(schema)
      const { refused } = checkRun(await readLogs(store), await billingState(schema), plan.length + 1, where)
      totalRefused += refused
      console.log(`        then ${report.actions.map((a) => a.action).join(',')}; refused retries: ${refused}`)
      const leases = await admin.query(`SELECT log_id FROM "${schema}".harness_leases`) // a row while held
      expect(leases.rows, `${where}: every lease released`).toEqual([])
      const wakeups = await admin.query(`SELECT log_id FROM "${schema}".harness_wakeups`)
      expect(wakeups.rows, `${where}: no wakeup left for a finished session`).toEqual([])
    } finally {
      await dropRun(schema)
    }
  }

  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  const table = [...distribution]
    .sort((a, b) => b[1] - a[1])
    .map(([point, n]) => `  ${String(n).padStart(3)}  ${point}`)
    .join('\n')
  console.log(
    `crash test: seed ${SEED}, ${RUNS} runs, ${kills} kills, ${totalRefused} retries refused by their key, ${seconds} s\n` +
      `where the kills left the ${kills * SESSIONS} sessions:\n${table}`,
  )
})
