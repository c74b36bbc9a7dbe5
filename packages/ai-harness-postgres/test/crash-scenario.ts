/**
 * The scenario helpers of crash.test.ts: child processes started ahead of time
 * (`crash-child.ts`), a run's schema and store, runs to the end or to a kill, and the
 * checks of what a run left, from the database alone. The test file holds the seeded plan
 * of kills.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { type LogEntry, type LogRecord, readAll } from '@tanstack/ai-harness/store'
import pg from 'pg'
import { expect } from 'vitest'
import { type PostgresStore, postgresStore } from '../src/index.js'
import { billingDdl, type ChildReport, type ChildTask, FINAL_ANSWER, orderIdOf, type ReceiptRecord, sessionIdOf } from './crash-support.js'
import { LineChild } from './line-child.js'
import { freshSchema, pgConfig } from './support.js'

export const SESSIONS = 4
const HOST_ID = 'crash-host'
const LEASE_MS = 30_000
const SPARE_CHILDREN = 3

/** One child process, started ahead of time: it prints `ready` and waits for its task. */
export class Child extends LineChild {
  report: ChildReport | undefined
  /** `event` lines so far: appends the store confirmed and billing calls that committed. */
  events = 0
  #waiting: { events: number; resolve: () => void } | undefined

  constructor() {
    super('crash-child.ts', [], 'the child')
    this.onLine = (line) => {
      if (line === 'event') this.events++
      else if (line.startsWith('done ')) this.report = JSON.parse(line.slice('done '.length)) as ChildReport
      if (this.#waiting && (this.events >= this.#waiting.events || this.report)) this.#waiting.resolve()
    }
    this.exited.then(() => this.#waiting?.resolve())
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
export async function takeChild(): Promise<Child> {
  const child = spares.shift() ?? new Child()
  await child.ready
  return child
}
export function topUp(): void {
  while (spares.length < SPARE_CHILDREN) spares.push(new Child())
}

export const admin = new pg.Pool({ ...pgConfig(), max: 4 })
admin.on('error', () => {})
const schemas = new Set<string>()

/** Stops the spare children and drops what is left: for the test file's afterAll. */
export async function closeScenarios(): Promise<void> {
  for (const child of spares.splice(0)) {
    child.proc.stdin?.end()
    await child.exited
  }
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
}

export async function freshRun(label: string): Promise<{ schema: string; store: PostgresStore }> {
  const schema = freshSchema(label)
  schemas.add(schema)
  const store = postgresStore({ client: admin, schema })
  await store.migrate()
  await admin.query(billingDdl(schema))
  return { schema, store }
}

export async function dropRun(schema: string): Promise<void> {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  schemas.delete(schema)
}

const task = (schema: string, linger: boolean): ChildTask => ({ schema, sessions: SESSIONS, hostId: HOST_ID, leaseMs: LEASE_MS, linger })

/** Runs a child to its end; it must exit 0. */
export async function runToEnd(schema: string): Promise<{ report: ChildReport; ms: number; events: number }> {
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
export async function runAndKill(schema: string, afterEvents: number, delayMs: number): Promise<{ finishedFirst: boolean }> {
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

export interface BillingState {
  charges: Array<{ idempotency_key: string; charge_id: string; order_id: string }>
  invoices: Array<{ idempotency_key: string; charge_id: string }>
  attempts: Array<{ operation: string; idempotency_key: string; subject: string; outcome: string; pid: number }>
}

export async function billingState(schema: string): Promise<BillingState> {
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
export function cutPoint(sessionId: string, entries: readonly LogEntry[], billing: BillingState): string {
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
export function checkRun(logs: Map<string, LogEntry[]>, billing: BillingState, processes: number, where: string): { refused: number } {
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

export async function readLogs(store: PostgresStore): Promise<Map<string, LogEntry[]>> {
  const logs = new Map<string, LogEntry[]>()
  for (let i = 0; i < SESSIONS; i++) logs.set(sessionIdOf(i), await readAll(store, sessionIdOf(i)))
  return logs
}
