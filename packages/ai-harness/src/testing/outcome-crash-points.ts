import { type AnyTool, toolDefinition } from '@tanstack/ai'
import { z } from 'zod'
import type { ManualClock } from '../contract/clock.js'
import type { HarnessStore, LogEntry, LogRecord } from '../contract/types.js'
import { durableTool, type Step } from '../runtime/durable-tool.js'
import { defineHarness, type Harness } from '../runtime/harness.js'
import { openWaits } from '../runtime/open-waits.js'
import { createWorker } from '../runtime/worker.js'
import type { CrashPoint } from './crashable-store.js'
import { startMachine, TEST_LEASE_MS } from './machines.js'
import { scriptedText } from './scripted-adapter.js'
import { drain } from './streams.js'

/**
 * Crash points around steps whose side effect cannot be made idempotent (`verify`,
 * `once`, `undo`): a run without a crash lists every append of the first process; then
 * for each append k, and each side of it (`before`: it never lands, `after`: it landed),
 * a first process dies there and a second one finishes the session (a person answers
 * what it asks). The list is generated from the run, so a new write is a new crash point.
 */

/** The systems a scenario's steps touch: none of them takes an idempotency key the harness could use. */
export class OutcomeSystems {
  /** Emails sent, by the step's key (the mailer itself keeps them in an outbox, without dedup). */
  readonly sent = new Map<string, number>()
  readonly charges = new Map<string, number>()
  readonly refunds = new Map<string, number>()
  /** What verify said or a person decided, per key: 'not-done' and 'run-again' allow one more effect each. */
  readonly rerunsAllowed = new Map<string, number>()

  count(map: Map<string, number>, key: string): void {
    map.set(key, (map.get(key) ?? 0) + 1)
  }
}

/** One scenario: a tool on the systems, the person's answer, and the checks of the end state. */
export interface OutcomeScenario {
  readonly name: 'verify' | 'verify-unknown' | 'once' | 'undo' | 'undo-cancel'
  tool(systems: OutcomeSystems): AnyTool
  /** The first process cancels the session once its turn parks (its crash points are the cancel's writes too). */
  readonly cancel?: string
  /** What the person answers to a question (the truth, as they find it in the outbox). */
  answer(systems: OutcomeSystems, question: { name: string }, key: string): unknown
  /** The checks of the call's result against the systems; `atCrash` is the log when the first process died. */
  check(
    result: LogRecord,
    systems: OutcomeSystems,
    key: (name: string) => string,
    atCrash: readonly LogRecord[],
    end: readonly LogRecord[],
  ): string[]
}

const input = z.object({})
const definition = (name: string) => toolDefinition({ name, description: `The ${name} scenario`, inputSchema: input })
const mailId = (key: string) => `mail:${key}`

/** verify: the outbox tells whether the mail went out. */
const verifyScenario = (unknown: boolean): OutcomeScenario => ({
  name: unknown ? 'verify-unknown' : 'verify',
  tool: (systems) =>
    durableTool(definition('mail'), async (_a, { step }) =>
      step.do(
        'send',
        {
          verify: ({ idempotencyKey }) => {
            if (unknown) return 'unknown'
            if (systems.sent.has(idempotencyKey)) return { done: { id: mailId(idempotencyKey) } }
            systems.count(systems.rerunsAllowed, idempotencyKey)
            return 'not-done'
          },
        },
        ({ idempotencyKey }) => {
          systems.count(systems.sent, idempotencyKey)
          return { id: mailId(idempotencyKey) }
        },
      ),
    ),
  answer: (systems, _question, key) => {
    if (systems.sent.has(key)) return { decision: 'done', value: { id: mailId(key) } }
    systems.count(systems.rerunsAllowed, key)
    return { decision: 'run-again' }
  },
  check: (result, systems, key) => {
    const k = key('send')
    const problems: string[] = []
    if (systems.sent.get(k) !== 1) problems.push(`the mail went out ${systems.sent.get(k) ?? 0} times`)
    if (result.ok !== true || JSON.stringify(result.result) !== JSON.stringify({ id: mailId(k) }))
      problems.push(`the call ended with ${JSON.stringify(result.result)}`)
    return problems
  },
})

/** once: a crash after the intent ends as STEP_OUTCOME_UNKNOWN, which the tool catches. */
const onceScenario: OutcomeScenario = {
  name: 'once',
  tool: (systems) =>
    durableTool(definition('sms'), async (_a, { step }) => {
      try {
        return await step.do('send', { once: true }, ({ idempotencyKey }) => {
          systems.count(systems.sent, idempotencyKey)
          return { id: mailId(idempotencyKey) }
        })
      } catch (error) {
        if ((error as { code?: unknown }).code === 'STEP_OUTCOME_UNKNOWN') return { unknown: true }
        throw error
      }
    }),
  answer: () => undefined,
  check: (result, systems, key, atCrash) => {
    const k = key('send')
    const sent = systems.sent.get(k) ?? 0
    const problems: string[] = []
    if (sent > 1) problems.push(`the sms went out ${sent} times`)
    const unknown = JSON.stringify(result.result) === JSON.stringify({ unknown: true })
    const cut =
      atCrash.some((r) => r.type === 'harness.step.intent' && r.name === 'send') &&
      !atCrash.some((r) => r.type === 'harness.step' && r.name === 'send')
    if (unknown !== cut)
      problems.push(`the call ended with ${JSON.stringify(result.result)}, but the crash ${cut ? 'did' : 'did not'} cut the step`)
    if (!unknown && (sent !== 1 || JSON.stringify(result.result) !== JSON.stringify({ id: mailId(k) })))
      problems.push(`the call ended with ${JSON.stringify(result.result)} after ${sent} sends`)
    return problems
  },
}

/**
 * The charge and the mail of the undo scenarios, each with a compensation that counts in
 * `refunds`. The mail is `once` (a cut one fails the call) or, with `verify`, looked up in
 * the outbox (a cut one goes on).
 */
export async function chargeAndMail(systems: OutcomeSystems, step: Step, mail: 'once' | 'verify'): Promise<void> {
  await step.do(
    'charge',
    { undo: (_v, { stepKey }) => systems.count(systems.refunds, stepKey) },
    ({ idempotencyKey }) => void systems.count(systems.charges, idempotencyKey),
  )
  const verify = ({ idempotencyKey }: { idempotencyKey: string }) => {
    if (systems.sent.has(idempotencyKey)) return { done: undefined }
    systems.count(systems.rerunsAllowed, idempotencyKey)
    return 'not-done' as const
  }
  await step.do(
    'mail',
    { ...(mail === 'once' ? { once: true } : { verify }), undo: (_v, { stepKey }) => systems.count(systems.refunds, stepKey) },
    ({ idempotencyKey }) => void systems.count(systems.sent, idempotencyKey),
  )
}

const CANCEL_REASON = 'the customer changed their mind'

/**
 * undo on a cancel: charge and mail (with verify) with compensations, then a question the
 * session is cancelled on. A crash anywhere in the cancel's rollback leaves a run after it to go on
 * rolling back; the turn ends cancelled and the model is not called again.
 */
const undoCancelScenario: OutcomeScenario = {
  name: 'undo-cancel',
  cancel: CANCEL_REASON,
  tool: (systems) =>
    durableTool(definition('order'), async (_a, { step }) => {
      await chargeAndMail(systems, step, 'verify')
      await step.ask({ name: 'ship', message: 'Ship it?', schema: z.object({ ok: z.boolean() }) })
    }),
  answer: () => undefined,
  check: (result, systems, key, _atCrash, end) => {
    const problems: string[] = []
    // The person cancels (again, when the crash came before the cancel's first write): every cut ends cancelled.
    const last = end.findLast((r) => r.type.startsWith('harness.turn.') && r.type !== 'harness.turn.resumed')
    if (last?.type !== 'harness.turn.cancelled') problems.push(`the cancelled turn ended with ${last?.type}`)
    const models = end.filter((r) => r.type === 'harness.assistant').length
    if (models !== 1) problems.push(`the model was called ${models} times (a cancelled turn calls it no more)`)
    const error = String((result.result as { error?: unknown } | null)?.error ?? '')
    if (result.ok !== false || !error.startsWith(`The session was cancelled: ${CANCEL_REASON}. The call was rolled back: `))
      problems.push(`the call ended with ${JSON.stringify(result.result)}`)
    for (const name of ['charge', 'mail']) {
      const undone = systems.refunds.get(key(name)) ?? 0
      if (error.includes(`"${name}" undone`) && undone !== 1) problems.push(`${name} is said undone, but its undo ran ${undone} times`)
      if (!error.includes(`"${name}" undone`) && !error.includes(`"${name}" may not be undone`))
        problems.push(`the error says nothing of ${name}`)
    }
    return problems
  },
}

/** undo: charge and mail with compensations, then an invoice that always fails. */
const undoScenario: OutcomeScenario = {
  name: 'undo',
  tool: (systems) =>
    durableTool(definition('order'), async (_a, { step }) => {
      await chargeAndMail(systems, step, 'once')
      await step.do('invoice', () => {
        throw new Error('The invoice service is down')
      })
    }),
  answer: () => undefined,
  check: (result, systems, key) => {
    const problems: string[] = []
    const error = String((result.result as { error?: unknown } | null)?.error ?? '')
    // A crash that cut the once step fails the call with STEP_OUTCOME_UNKNOWN: the mail never finished, so only the charge is undone.
    const mailUnknown = error.startsWith('StepOutcomeUnknownError: Step "mail"')
    if (
      result.ok !== false ||
      !(mailUnknown || error.startsWith('The invoice service is down.')) ||
      !error.includes(' The call was rolled back: ')
    )
      problems.push(`the call ended with ${JSON.stringify(result.result)}`)
    if ((systems.sent.get(key('mail')) ?? 0) > 1) problems.push('the once step ran twice')
    for (const name of mailUnknown ? ['charge'] : ['charge', 'mail']) {
      const undone = systems.refunds.get(key(name)) ?? 0
      if (undone > 1) problems.push(`${name} was undone ${undone} times`)
      if (error.includes(`"${name}" undone`) && undone !== 1) problems.push(`${name} is said undone, but its undo ran ${undone} times`)
      if (!error.includes(`"${name}" undone`) && !error.includes(`"${name}" may not be undone`))
        problems.push(`the error says nothing of ${name}`)
    }
    return problems
  },
}

/** The scenarios, by name. */
export const OUTCOME_SCENARIOS = {
  verify: verifyScenario(false),
  'verify-unknown': verifyScenario(true),
  once: onceScenario,
  undo: undoScenario,
  'undo-cancel': undoCancelScenario,
} as const satisfies Record<string, OutcomeScenario>

export interface OutcomeCrashOptions {
  readonly scenario: keyof typeof OUTCOME_SCENARIOS
  /** A fresh world per run: its clock and a way to open store instances on one data set. */
  world(): Promise<{ clock: ManualClock; openStore(): Promise<HarnessStore>; close?(): Promise<void> }>
  /**
   * Only the appends this picks, by their description (e.g. `[harness.step.intent]`).
   * Default: every append. The conformance cases pick the writes of the tool call's steps.
   */
  select?: (write: string) => boolean
}

export interface OutcomeCrashReport {
  /** Each append of the run without a crash, as `[types]`, in order. */
  readonly writes: string[]
  /** Every point run: append k (from 1), which side, and how the session ended. */
  readonly points: Array<{ k: number; point: CrashPoint; write: string; ended: 'finished' | 'waiting' | 'stuck' }>
  /** One line per broken invariant, naming the point; empty when all hold. */
  readonly failures: string[]
}

const SESSION = 'outcome'

/** Every crash point of the scenario: before and after each append of the first process. */
export async function enumerateOutcomeCrashPoints(options: OutcomeCrashOptions): Promise<OutcomeCrashReport> {
  const reference = await runPoint(options, undefined)
  const failures = reference.failures.map((f) => `the run without a crash: ${f}`)
  const points: OutcomeCrashReport['points'] = []
  for (let k = 1; k <= reference.writes.length; k++) {
    if (options.select && !options.select(reference.writes[k - 1]!)) continue
    for (const point of ['before', 'after'] as const) {
      const run = await runPoint(options, { k, point })
      const write = reference.writes[k - 1]!
      if (!run.crashed) failures.push(`${point} append ${k} ${write}: the run never got there; the scenario is not deterministic`)
      failures.push(...run.failures.map((f) => `${point} append ${k} ${write}: ${f}`))
      points.push({ k, point, write, ended: run.ended })
    }
  }
  return { writes: reference.writes, points, failures }
}

// long: one crash point told in order (the first process up to its crash, the second one, the checks); they share the world
async function runPoint(options: OutcomeCrashOptions, crash: { k: number; point: CrashPoint } | undefined) {
  const scenario: OutcomeScenario = OUTCOME_SCENARIOS[options.scenario]
  const world = await options.world()
  const systems = new OutcomeSystems()
  const harness = harnessOf(scenario.tool(systems))
  const writes: string[] = []
  const first = startMachine(await world.openStore(), { harnesses: harness, clock: world.clock, hostId: 'first' })
  let n = 0
  first.store.crashOnAppend((records) => {
    writes.push(`[${records.map((r) => r.type).join(',')}]`)
    return crash !== undefined && ++n === crash.k
  }, crash?.point ?? 'after')
  const direct = await world.openStore()
  const firstFailure = await runFirstProcess(first.store, async () => {
    const session = await first.host.open({ sessionId: SESSION })
    await drain(session.send('go'))
    if (scenario.cancel !== undefined) await session.cancel(scenario.cancel)
    await session.close()
  })
  const atCrash = await readAll(direct)
  const failures: string[] = []
  // What a dead process still threw (a call in flight when it died) is no failure; a live one's is.
  if (firstFailure !== undefined) failures.push(firstFailure)
  if (first.store.crashed) {
    // A cancel the crash cut before its first write never happened: the person cancels again.
    const cancelLanded = atCrash.some((e) => e.record.type === 'harness.rollback' || e.record.type === 'harness.turn.cancelled')
    await finishElsewhere(world, harness, scenario, systems, direct, !cancelLanded).catch((error: unknown) => {
      failures.push(`the second process failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`)
    })
  }
  const end = await readAll(direct)
  const records = end.map((e) => e.record)
  const ended = endOf(records)
  failures.push(...wellFormed(end))
  if (ended === 'stuck') failures.push(`the session is stuck: ${records.map((r) => r.type.replace(/^harness\./, '')).join(' ')}`)
  const results = records.filter((r) => r.type === 'harness.tool.result')
  const callId = records.find((r) => r.type === 'harness.assistant')?.toolCalls as Array<{ id: string }> | undefined
  const key = (name: string) => `${SESSION}:${callId?.[0]?.id}:${name}`
  if (results.length === 1)
    failures.push(
      ...scenario.check(
        results[0]!,
        systems,
        key,
        atCrash.map((e) => e.record),
        records,
      ),
    )
  else if (atCrash.some((e) => e.record.type === 'harness.turn.started')) failures.push(`the call has ${results.length} results`)
  else if (systems.sent.size + systems.charges.size > 0) failures.push('a step ran for a prompt that was never logged')
  for (const [k, count] of systems.sent) {
    if (count > 1 + (systems.rerunsAllowed.get(k) ?? 0)) failures.push(`${k} ran ${count} times, with no verify or person that said to`)
  }
  for (const [k, count] of systems.refunds) if (count > 1) failures.push(`the compensation of ${k} ran ${count} times`)
  await direct.close?.()
  await world.close?.()
  return { writes, crashed: first.store.crashed, ended, failures }
}

function harnessOf(tool: AnyTool): Harness {
  const adapter = scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: tool.name, args: {} }] } : 'Done.',
  )
  return defineHarness({ name: 'outcomes', adapter, tools: [tool] })
}

/** A second process finishes the session: it resumes the cut turn, a person answers each question, a worker goes on. */
async function finishElsewhere(
  world: Awaited<ReturnType<OutcomeCrashOptions['world']>>,
  harness: Harness,
  scenario: OutcomeScenario,
  systems: OutcomeSystems,
  direct: HarnessStore,
  cancelAgain: boolean,
): Promise<void> {
  world.clock.advance(TEST_LEASE_MS + 1)
  // The process that finishes is the one that reads the log (`direct`): a store instance fewer per point.
  const second = startMachine(direct, { harnesses: harness, clock: world.clock, hostId: 'second' })
  const started = (await readAll(direct)).some((e) => e.record.type === 'harness.session.opened')
  if (started) {
    const session = await second.host.open({ sessionId: SESSION })
    await drain(session.resume())
    if (scenario.cancel !== undefined && cancelAgain && session.needsRecovery) await session.cancel(scenario.cancel)
    await session.close()
  }
  const worker = createWorker({ store: direct, harnesses: harness, clock: world.clock, leaseMs: TEST_LEASE_MS })
  for (let round = 0; round < 6; round++) {
    const entries = await readAll(direct)
    if (endOf(entries.map((e) => e.record)) !== 'waiting') break
    for (const q of openWaits(SESSION, entries).questions) {
      const stepName = q.name.replace(/^verify:\d+:/, '')
      const answer = scenario.answer(systems, q, `${SESSION}:${q.toolCallId}:${stepName}`)
      await second.host.answer({ sessionId: SESSION, questionId: q.questionId, answer }).catch(() => {})
    }
    world.clock.advance(TEST_LEASE_MS + 1)
    await worker.poll()
  }
  await worker.stop()
  await second.host.shutdown()
}

/** How a session ended: its turn finished (or was cancelled), it waits for a person (an open question), or it is stuck (open, with nothing to wait for). */
function endOf(records: readonly LogRecord[]): 'finished' | 'waiting' | 'stuck' {
  const last = records.findLast((r) => r.type.startsWith('harness.turn.') && r.type !== 'harness.turn.resumed')
  if (!last || last.type !== 'harness.turn.started') return 'finished'
  const asked = records.filter((r) => r.type === 'harness.ask').length
  const answered = records.filter((r) => r.type === 'harness.answer').length
  return asked > answered ? 'waiting' : 'stuck'
}

function wellFormed(entries: readonly LogEntry[]): string[] {
  const problems: string[] = []
  for (const [i, e] of entries.entries()) if (e.seq !== i + 1) problems.push(`seq ${e.seq} at position ${i + 1}`)
  const results = entries.filter((e) => e.record.type === 'harness.tool.result').map((e) => String(e.record.toolCallId))
  if (new Set(results).size !== results.length) problems.push('a call has two results')
  return problems
}

export async function readAll(store: HarnessStore, logId = SESSION): Promise<LogEntry[]> {
  const entries: LogEntry[] = []
  for (;;) {
    const page = await store.read(logId, { after: entries.length, limit: 1000 })
    if (page.length === 0) return entries
    entries.push(...page)
  }
}

/**
 * Runs the first process's work until it ends or its store dies (then its pending work hangs
 * for good). Returns why it failed when it failed with its store alive, else undefined.
 */
export async function runFirstProcess(store: { readonly crashed: boolean }, work: () => Promise<void>): Promise<string | undefined> {
  let ran = false
  let runError: unknown
  const run = work()
    .catch((error: unknown) => {
      runError = error
    })
    .finally(() => {
      ran = true
    })
  await Promise.race([run, untilCrashed(store, () => ran)])
  return runError !== undefined && !store.crashed ? `the first process failed: ${String(runError)}` : undefined
}

/** Resolves once the store crashed; waits a millisecond at a time (the run's own work is in-process). */
async function untilCrashed(store: { readonly crashed: boolean }, ended: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!store.crashed && !ended()) {
    if (Date.now() > deadline) throw new Error('the crash point was never reached')
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}
