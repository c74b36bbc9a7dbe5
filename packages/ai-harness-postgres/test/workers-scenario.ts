/**
 * The scenario helpers of workers.test.ts: worker processes (`worker-child.ts`), a run's
 * schema, store and starting host, the sessions' plans, the watch that answers questions
 * and fails early on a stuck session, and the checks of a finished run from the database
 * alone. The test file holds the two scenarios and their seeded plans.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createHost, type Host, isHarnessError } from '@tanstack/ai-harness'
import { questionId } from '@tanstack/ai-harness/log'
import { type LogEntry, readAll } from '@tanstack/ai-harness/store'
import { assertOneDriverAtATime, assertWellFormed } from '@tanstack/ai-harness-conformance'
import pg from 'pg'
import { expect } from 'vitest'
import { type PostgresStore, postgresStore } from '../src/index.js'
import { billingDdl, PgBilling } from './crash-support.js'
import { LineChild } from './line-child.js'
import { freshSchema, pgConfig } from './support.js'
import {
  ASK_NAME,
  type Channel,
  type ErrandArgs,
  type ErrandReceipt,
  errandHarness,
  FINAL_ANSWER,
  promptOf,
  type WorkerTask,
} from './workers-support.js'

const POLL_MS = 50
const LEASE_MS = 1_500
const HOLD_MS = 2_000
const BATCH_SIZE = 3
/** Everything must be finished this long after the sessions start: a clean run takes a few seconds. */
const FINISH_WITHIN_MS = 40_000
/** A session with nobody to move it (no wakeup, no live lease, not waiting for the test's answer) this long is stuck. */
const STUCK_AFTER_MS = 4_000
const STARTER = 'starter'

/** One worker process. */
export class WorkerProcess extends LineChild {
  readonly errors: string[] = []

  constructor(
    readonly workerId: string,
    task: WorkerTask,
    onStep: (worker: WorkerProcess, key: string) => void,
  ) {
    super('worker-child.ts', [JSON.stringify(task)], `worker ${workerId}`)
    this.onLine = (line) => {
      if (line.startsWith('step ')) onStep(this, line.slice('step '.length))
      else if (line.startsWith('error ')) this.errors.push(line.slice('error '.length))
    }
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null
  }

  /** Closes stdin: the worker stops polling, finishes its current poll and exits 0. */
  async stop(): Promise<void> {
    this.proc.stdin?.end()
    const result = await Promise.race([this.exited, sleep(20_000).then(() => 'timeout' as const)])
    if (result === 'timeout') {
      this.proc.kill('SIGKILL')
      throw new Error(`worker ${this.workerId} did not stop within 20 s:\n${this.stderr}`)
    }
    if (result.code !== 0)
      throw new Error(`worker ${this.workerId} stopped with code ${result.code}, signal ${result.signal}:\n${this.stderr}`)
  }
}

const admin = new pg.Pool({ ...pgConfig(), max: 6 })
admin.on('error', () => {})
const processes: WorkerProcess[] = []
const schemas = new Set<string>()

/** Kills what is still running and drops what is left: for the test file's afterAll. */
export async function closeScenarios(): Promise<void> {
  for (const worker of processes) if (worker.alive) worker.proc.kill('SIGKILL')
  await Promise.all(processes.map((worker) => worker.exited))
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
}

/** The command that replays a run of the test with its seed. */
export const replayOf = (seed: number) => `WORKERS_SEED=${seed} npx vitest run --project postgres test/workers.test.ts`

/** One scenario's schema, store, and the test's own host (it starts the sessions and answers the questions). */
export interface Run {
  label: string
  schema: string
  store: PostgresStore
  host: Host
  workers: WorkerProcess[]
  startWorker(
    workerId: string,
    options?: { wakeupLatencyMs?: number; onStep?: (worker: WorkerProcess, key: string) => void },
  ): WorkerProcess
  where(sessionId?: string): string
}

export async function freshRun(label: string, seed: number): Promise<Run> {
  const schema = freshSchema(label)
  schemas.add(schema)
  const store = postgresStore({ client: admin, schema })
  await store.migrate()
  await admin.query(billingDdl(schema))
  // The starter's billing is never called: the tool parks before its first step.
  const host = createHost({ store, harnesses: errandHarness({ billing: new PgBilling(admin, schema), by: STARTER }), hostId: STARTER })
  const workers: WorkerProcess[] = []
  return {
    label,
    schema,
    store,
    host,
    workers,
    startWorker(workerId, options = {}) {
      const task: WorkerTask = {
        schema,
        workerId,
        pollMs: POLL_MS,
        leaseMs: LEASE_MS,
        holdMs: HOLD_MS,
        batchSize: BATCH_SIZE,
        wakeupLatencyMs: options.wakeupLatencyMs,
      }
      const worker = new WorkerProcess(workerId, task, options.onStep ?? (() => {}))
      processes.push(worker)
      workers.push(worker)
      return worker
    },
    where: (sessionId) => `seed ${seed}, ${label}${sessionId ? `, ${sessionId}` : ''} (replay: ${replayOf(seed)})`,
  }
}

export async function dropRun(run: Run): Promise<void> {
  await admin.query(`DROP SCHEMA IF EXISTS "${run.schema}" CASCADE`)
  schemas.delete(run.schema)
}

/** The plan of one session, drawn from the seed. */
export interface SessionPlan {
  sessionId: string
  args: ErrandArgs
  /** For a session that asks: what the test answers, and how long after it sees the question (or the park). */
  answer?: { delayMs: number; channel: Channel }
}

/** Opens every session on the test's host and sends its prompt: each parks at its first sleep. */
export async function startSessions(run: Run, sessions: readonly SessionPlan[]): Promise<void> {
  await Promise.all(
    sessions.map(async ({ sessionId, args }) => {
      const session = await run.host.open({ sessionId })
      try {
        for await (const _ of session.send(promptOf(args))) {
        }
        expect(session.status, `${run.where(sessionId)}: parked at its first sleep`).toBe('parked')
      } finally {
        await session.close()
      }
    }),
  )
}

const finishedOf = (entries: readonly LogEntry[]) => entries.some((e) => e.record.type === 'harness.turn.finished')
const summary = (entries: readonly LogEntry[]) =>
  JSON.stringify(entries.map((e) => [e.seq, e.record.type, e.record.host ?? e.record.reason ?? e.record.name ?? '']))

export async function readLogs(run: Run, sessions: readonly SessionPlan[]): Promise<Map<string, LogEntry[]>> {
  return new Map(await Promise.all(sessions.map(async ({ sessionId }) => [sessionId, await readAll(run.store, sessionId)] as const)))
}

/**
 * Polls the database until every session has finished its turn, answering each
 * question `answer.delayMs` after it sees it (the `harness.ask` record, or with
 * `answerOn: 'parked'` the session's park after it). Fails at the deadline, or early
 * when a session is left with nobody to move it.
 */
export async function watchUntilFinished(
  run: Run,
  sessions: readonly SessionPlan[],
  options: { answerOn: 'ask' | 'parked'; everyMs: number },
): Promise<Map<string, LogEntry[]>> {
  const started = performance.now()
  const questions = new Map<string, { questionId: string; seenAt: number; sent: boolean; tries: number }>()
  const nobodySince = new Map<string, number>()
  for (;;) {
    const logs = await readLogs(run, sessions)
    const now = performance.now()
    if (sessions.every(({ sessionId }) => finishedOf(logs.get(sessionId)!))) return logs

    for (const { sessionId, answer } of sessions) {
      if (!answer) continue
      const entries = logs.get(sessionId)!
      const ask = entries.find((e) => e.record.type === 'harness.ask')
      const seen =
        ask &&
        (options.answerOn === 'ask' ||
          entries.some((e) => e.seq > ask.seq && e.record.type === 'harness.parked' && e.record.toolCallId === ask.record.toolCallId))
      if (!seen) continue
      let question = questions.get(sessionId)
      if (!question) {
        question = { questionId: questionId(String(ask.record.toolCallId), ASK_NAME), seenAt: now, sent: false, tries: 0 }
        questions.set(sessionId, question)
      }
      if (question.sent || now < question.seenAt + answer.delayMs) continue
      question.tries++
      try {
        await run.host.answer({ sessionId, questionId: question.questionId, answer: { channel: answer.channel } })
        question.sent = true
      } catch (error) {
        // A lost reply after the answer landed: the next try finds it answered.
        if (isHarnessError(error, 'ALREADY_ANSWERED') && question.tries > 1) question.sent = true
        else if (!isHarnessError(error, 'SESSION_BUSY') && !isHarnessError(error, 'STORE_UNAVAILABLE')) throw error
      }
    }

    // A session nobody will ever move again is stuck: fail now, with what the database says.
    const [wakeups, leases] = await Promise.all([
      admin.query<{ log_id: string; at: string }>(`SELECT log_id, at FROM "${run.schema}".harness_wakeups`),
      // A lease row exists while its lease is held.
      admin.query<{ log_id: string; owner: string; expires_at: string }>(
        `SELECT log_id, owner, expires_at FROM "${run.schema}".harness_leases`,
      ),
    ])
    const wall = Date.now()
    for (const { sessionId } of sessions) {
      const entries = logs.get(sessionId)!
      const waitsForTheTest =
        entries.some((e) => e.record.type === 'harness.ask') && !entries.some((e) => e.record.type === 'harness.answer')
      const wakeup = wakeups.rows.some((r) => r.log_id === sessionId)
      const lease = leases.rows.some((r) => r.log_id === sessionId && Number(r.expires_at) > wall)
      if (finishedOf(entries) || waitsForTheTest || wakeup || lease) {
        nobodySince.delete(sessionId)
        continue
      }
      const since = nobodySince.get(sessionId) ?? now
      nobodySince.set(sessionId, since)
      if (now - since > STUCK_AFTER_MS) {
        throw new Error(
          `${run.where(sessionId)}: stuck for ${STUCK_AFTER_MS} ms: its turn is open, it has no wakeup and no live lease, ` +
            `and it waits for nothing the test owes it, so no worker will ever resume it. Its log: ${summary(entries)}; ` +
            `its lease row: ${JSON.stringify(leases.rows.filter((r) => r.log_id === sessionId))}` +
            workerErrors(run),
        )
      }
    }
    if (now - started > FINISH_WITHIN_MS) {
      const open = sessions.filter(({ sessionId }) => !finishedOf(logs.get(sessionId)!))
      throw new Error(
        `${run.where()}: not every session finished within ${FINISH_WITHIN_MS} ms:\n` +
          open.map(({ sessionId }) => `  ${sessionId}: ${summary(logs.get(sessionId)!)}`).join('\n') +
          workerErrors(run) +
          run.workers.map((w) => `\n${w.workerId} stderr:\n${w.stderr}`).join(''),
      )
    }
    await sleep(options.everyMs)
  }
}

export function workerErrors(run: Run): string {
  const errors = run.workers.flatMap((w) => w.errors.map((e) => `\n  ${w.workerId}: ${e.slice(0, 200)}`))
  return errors.length > 0 ? `\nworker errors:${errors.join('')}` : ''
}

const isDriverRecord = (entry: LogEntry) => entry.record.type === 'harness.turn.started' || entry.record.type === 'harness.turn.resumed'

/** Each stretch of the log: its driver and its entries, in order. */
export function stretches(entries: readonly LogEntry[]): Array<{ host: string; entries: LogEntry[] }> {
  const out: Array<{ host: string; entries: LogEntry[] }> = []
  for (const entry of entries) {
    if (isDriverRecord(entry)) out.push({ host: String(entry.record.host), entries: [] })
    out.at(-1)?.entries.push(entry)
  }
  return out
}

/**
 * Every invariant of a finished scenario, from the database alone. Returns who drove how
 * many stretches and how many retries the billing refused.
 */
export async function checkRun(
  run: Run,
  sessions: readonly SessionPlan[],
  logs: Map<string, LogEntry[]>,
): Promise<{ drivers: Map<string, number>; attempts: number; refused: number }> {
  const chargeKeys = new Map<string, string>() // idempotency key -> charge id, as the logs say
  const invoiceKeys = new Set<string>()
  const drivers = new Map<string, number>()
  for (const { sessionId, args, answer } of sessions) {
    const at = run.where(sessionId)
    const entries = logs.get(sessionId)!
    const records = entries.map((e) => e.record)
    const types = records.map((r) => r.type)
    assertWellFormed(entries)
    assertOneDriverAtATime(entries)
    expect(types.filter((t) => t === 'harness.turn.started').length, `${at}: one turn`).toBe(1)
    expect(types.filter((t) => t === 'harness.turn.finished').length, `${at}: the turn finished once`).toBe(1)
    expect(types.at(-1), `${at}: finished last`).toBe('harness.turn.finished')
    const final = records.at(-2)
    expect(final?.type === 'harness.assistant' && final.text, `${at}: the model's answer before the end`).toBe(FINAL_ANSWER)

    // The one errand call, settled once, not cut, with the planned channel.
    const calls = records.flatMap((r) =>
      r.type === 'harness.assistant' ? (r.toolCalls as Array<{ id: string; name: string; arguments: string }>) : [],
    )
    expect(
      calls.map((c) => [c.name, JSON.parse(c.arguments)]),
      `${at}: one errand call`,
    ).toEqual([['errand', args]])
    const callId = calls[0]!.id
    const results = records.filter((r) => r.type === 'harness.tool.result')
    expect(
      results.map((r) => [r.toolCallId, r.ok, r.cut]),
      `${at}: settled once, ok, not cut`,
    ).toEqual([[callId, true, false]])
    const channel: Channel = answer?.channel ?? 'email'
    const chargeId = (results[0]!.result as { chargeId?: string }).chargeId
    expect(results[0]!.result, `${at}: the result`).toEqual({ chargeId, channel })

    // Steps once each, in order; sleeps logged once; the question asked and answered once.
    const steps = records.filter((r) => r.type === 'harness.step')
    expect(
      steps.map((r) => [r.toolCallId, r.name]),
      `${at}: each step logged once, in order`,
    ).toEqual([
      [callId, `charge:${args.orderId}`],
      [callId, `invoice:${chargeId}`],
    ])
    expect((steps[0]!.value as { id: string }).id, `${at}: the charge step holds the charge`).toBe(chargeId)
    expect((steps[1]!.value as { channel: string }).channel, `${at}: the invoice went out as answered`).toBe(channel)
    expect(
      records.filter((r) => r.type === 'harness.sleep').map((r) => r.name),
      `${at}: each sleep logged once`,
    ).toEqual(args.napMs > 0 ? ['queue', 'cool-off'] : ['queue'])
    expect(records.filter((r) => r.type === 'harness.ask').length, `${at}: asked once (or never)`).toBe(args.ask ? 1 : 0)
    expect(
      records.filter((r) => r.type === 'harness.answer').map((r) => r.answer),
      `${at}: the test's answer, once`,
    ).toEqual(args.ask ? [{ channel }] : [])
    expect(
      (records.filter((r) => r.type === 'app.receipt') as unknown as ErrandReceipt[]).map((r) => [r.orderId, r.chargeId, r.channel]),
      `${at}: one receipt`,
    ).toEqual([[args.orderId, chargeId, channel]])

    // One driver at a time, record by record: every step and receipt was written by the
    // driver of its stretch (a stale driver's write would land inside another's stretch),
    // and no stretch ran a step before the wake time of a sleep logged before it.
    const list = stretches(entries)
    expect(list[0]?.host, `${at}: the starter began the turn`).toBe(STARTER)
    const sleptUntil: number[] = []
    for (const stretch of list) {
      drivers.set(stretch.host, (drivers.get(stretch.host) ?? 0) + 1)
      const from = Number(stretch.entries[0]!.record.at)
      for (const { seq, record } of stretch.entries) {
        if (record.type === 'harness.sleep') sleptUntil.push(Number(record.wakeAt))
        const by =
          record.type === 'harness.step' ? (record.value as { by?: string }).by : record.type === 'app.receipt' ? record.by : undefined
        if (by !== undefined) expect(by, `${at}: seq ${seq} (${record.type}) written by the driver of its stretch`).toBe(stretch.host)
        if (record.type === 'harness.step') {
          for (const until of sleptUntil)
            expect(from, `${at}: seq ${seq} ran in a stretch begun after the wake time`).toBeGreaterThanOrEqual(until)
        }
      }
    }
    chargeKeys.set(`${sessionId}:${callId}:charge:${args.orderId}`, chargeId!)
    invoiceKeys.add(`${sessionId}:${callId}:invoice:${chargeId}`)
  }

  // Every side effect once per idempotency key, and exactly the ones the logs name.
  const s = `"${run.schema}"`
  const charges = (await admin.query<{ idempotency_key: string; charge_id: string }>(`SELECT * FROM ${s}.billing_charges`)).rows
  const invoices = (await admin.query<{ idempotency_key: string }>(`SELECT * FROM ${s}.billing_invoices`)).rows
  const attempts = (await admin.query<{ idempotency_key: string; outcome: string }>(`SELECT * FROM ${s}.billing_attempts ORDER BY id`)).rows
  expect(
    Object.fromEntries(charges.map((c) => [c.idempotency_key, c.charge_id])),
    `${run.where()}: one charge per order, under the logged key`,
  ).toEqual(Object.fromEntries(chargeKeys))
  expect(invoices.map((i) => i.idempotency_key).sort(), `${run.where()}: one invoice per charge, under the logged key`).toEqual(
    [...invoiceKeys].sort(),
  )
  const byKey = new Map<string, string[]>()
  for (const a of attempts) byKey.set(a.idempotency_key, [...(byKey.get(a.idempotency_key) ?? []), a.outcome])
  expect([...byKey.keys()].sort(), `${run.where()}: attempts only for logged keys`).toEqual([...chargeKeys.keys(), ...invoiceKeys].sort())
  for (const [key, outcomes] of byKey) {
    expect(outcomes, `${run.where()}: ${key}: the first attempt did it, every retry was refused`).toEqual([
      'created',
      ...outcomes.slice(1).map(() => 'refused'),
    ])
  }
  return { drivers, attempts: attempts.length, refused: attempts.filter((a) => a.outcome === 'refused').length }
}

/** The workers stop gracefully (each finishes its current poll); then no lease is left held. */
export async function stopWorkers(run: Run): Promise<void> {
  await Promise.all(run.workers.filter((w) => w.alive).map((w) => w.stop()))
  const held = await admin.query(`SELECT log_id, owner FROM "${run.schema}".harness_leases`)
  expect(held.rows, `${run.where()}: every lease released`).toEqual([])
}
