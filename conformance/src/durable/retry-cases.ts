import assert from 'node:assert/strict'
import { toolDefinition } from '@tanstack/ai'
import {
  createWorker,
  defineHarness,
  durableTool,
  HARNESS_EVENTS,
  NonRetryableError,
  type StepOptions,
  type StepRunContext,
} from '@tanstack/ai-harness'
import { SECRET_MARKER } from '@tanstack/ai-harness/log'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { scriptedText, TEST_LEASE_MS } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { type CaseContext, defineCase, readFrom } from '../case.js'
import { assertWellFormed, drain, runUntilCrash, startCaseMachine } from './fixtures.js'

const MINUTE = 60_000
/** Longer than any store's own clock drift in a test: a retry delay that parks. */
const PARK_AFTER_MS = 1_000

/** A payment service that fails its first `failures` calls, and refuses a repeated idempotency key. */
class FlakyBilling {
  readonly calls: Array<{ attempt: number; key: string }> = []
  readonly charged = new Set<string>()

  constructor(
    private readonly failures: number,
    private readonly error: (call: number) => unknown = (call) => new Error(`gateway timeout ${call}`),
  ) {}

  charge({ attempt, idempotencyKey }: StepRunContext): { id: string } {
    this.calls.push({ attempt, key: idempotencyKey })
    if (this.calls.length <= this.failures) throw this.error(this.calls.length)
    this.charged.add(idempotencyKey)
    return { id: `ch_${this.charged.size}` }
  }
}

/**
 * A harness whose tool `pay` charges in one step with `options`; the tool returns the
 * charge, or the code and message of what the step threw, so a case sees what the tool saw.
 */
function payHarness(billing: FlakyBilling, options: StepOptions, harness: { parkAfterMs?: number } = {}) {
  const pay = durableTool(
    toolDefinition({ name: 'pay', description: 'Charge the order', inputSchema: z.object({}) }),
    async (_a, { step }) => {
      try {
        return await step.do('charge', options, (context) => billing.charge(context))
      } catch (error) {
        return { code: (error as { code?: unknown }).code, message: (error as Error).message }
      }
    },
  )
  const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'pay', args: {} }] } : 'Paid.'))
  return defineHarness({ name: 'retries', adapter, tools: [pay], ...harness })
}

const failuresOf = (records: readonly LogRecord[]) => records.filter((r) => r.type === 'harness.step.failed')

async function logOf(context: CaseContext, sessionId: string): Promise<LogRecord[]> {
  const entries = await readFrom(context.store, sessionId)
  assertWellFormed(entries)
  return entries.map((e) => e.record)
}

const resultOf = (records: readonly LogRecord[]) => records.filter((r) => r.type === 'harness.tool.result').at(-1)?.result

const isFailure = (attempt: number, final?: boolean) => (records: readonly LogRecord[]) =>
  records.some((r) => r.type === 'harness.step.failed' && r.attempt === attempt && (final === undefined || r.final === final))

export const retryCases = [
  defineCase({
    id: 'durable.step.throw-records-nothing',
    title: 'a step without retries whose fn throws logs nothing, the tool sees what fn threw, and a later turn calls fn again',
    async run(context) {
      const billing = new FlakyBilling(1, () => new TypeError('gateway refused'))
      const proc = await startCaseMachine(context, payHarness(billing, {}), 'host')
      const session = await proc.host.open({ sessionId: 'once' })
      await drain(session.send('pay'))
      let log = await logOf(context, 'once')
      assert.deepEqual(failuresOf(log), [], 'no failure record without retries')
      assert.equal(log.filter((r) => r.type === 'harness.step').length, 0, 'no step record for a throw')
      assert.deepEqual(resultOf(log), { message: 'gateway refused' }, 'the tool caught the error fn threw')
      await drain(session.send('pay'))
      log = await logOf(context, 'once')
      assert.equal(billing.calls.length, 2, 'nothing recorded, so the next call of the tool runs fn again')
      assert.deepEqual(resultOf(log), { id: 'ch_1' })
    },
  }),
  defineCase({
    id: 'durable.retry.attempts-logged',
    title: 'a failing step is tried again up to its attempts with the same idempotency key; each failed attempt is logged before the next',
    async run(context) {
      const billing = new FlakyBilling(2)
      const proc = await startCaseMachine(context, payHarness(billing, { attempts: 3, delayMs: 0 }), 'host')
      await drain((await proc.host.open({ sessionId: 'pay' })).send('pay'))
      const log = await logOf(context, 'pay')
      assert.deepEqual(
        billing.calls.map((c) => c.attempt),
        [1, 2, 3],
      )
      assert.equal(new Set(billing.calls.map((c) => c.key)).size, 1, 'one idempotency key for every attempt')
      const failures = failuresOf(log)
      assert.deepEqual(
        failures.map((f) => [f.attempt, f.final, f.error, f.timedOut]),
        [
          [1, false, 'gateway timeout 1', false],
          [2, false, 'gateway timeout 2', false],
        ],
      )
      for (const f of failures) assert.equal(typeof f.retryAt, 'number', 'a failure that is not final has its retry time')
      const steps = log.filter((r) => r.type === 'harness.step')
      assert.deepEqual(
        steps.map((r) => r.value),
        [{ id: 'ch_1' }],
      )
      assert.ok(log.indexOf(failures[1]!) < log.indexOf(steps[0]!), 'the failures are logged before the value')
      assert.deepEqual(resultOf(log), { id: 'ch_1' })
    },
  }),
  defineCase({
    id: 'durable.retry.count-kept-across-crash',
    title: 'after a crash the attempts go on from the log: the attempt number continues and the key stays the same',
    async run(context) {
      const billing = new FlakyBilling(2)
      const harness = payHarness(billing, { attempts: 4, delayMs: 0 })
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend(isFailure(1), 'after')
      await runUntilCrash(first, (await first.host.open({ sessionId: 'pay' })).send('pay'), 'pay')
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      await drain((await second.host.open({ sessionId: 'pay' })).resume())
      assert.deepEqual(
        billing.calls.map((c) => c.attempt),
        [1, 2, 3],
        'attempt 2 came after the crash, from the logged count',
      )
      assert.equal(new Set(billing.calls.map((c) => c.key)).size, 1)
      const log = await logOf(context, 'pay')
      assert.deepEqual(
        failuresOf(log).map((f) => f.attempt),
        [1, 2],
      )
      assert.deepEqual(resultOf(log), { id: 'ch_1' })
    },
  }),
  defineCase({
    id: 'durable.retry.final-stays-failed',
    title:
      'a step that ran out of attempts, or threw a NonRetryableError, stays failed: a run after a crash throws the same STEP_FAILED without calling fn',
    async run(context) {
      for (const [sessionId, billing, options] of [
        ['spent', new FlakyBilling(99), { attempts: 2, delayMs: 0 }],
        ['declined', new FlakyBilling(99, () => new NonRetryableError('card declined')), { attempts: 5, delayMs: 0 }],
      ] as const) {
        const harness = payHarness(billing, options)
        const first = await startCaseMachine(context, harness, `${sessionId}-1`)
        first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step.failed' && r.final === true), 'after')
        await runUntilCrash(first, (await first.host.open({ sessionId })).send('pay'), sessionId)
        const calls = billing.calls.length
        assert.equal(calls, sessionId === 'spent' ? 2 : 1, `${sessionId}: attempts before the crash`)
        context.clock.advance(TEST_LEASE_MS + 1)
        const second = await startCaseMachine(context, harness, `${sessionId}-2`)
        await drain((await second.host.open({ sessionId })).resume())
        assert.equal(billing.calls.length, calls, `${sessionId}: fn was not called after the crash`)
        const log = await logOf(context, sessionId)
        assert.equal(failuresOf(log).length, calls, `${sessionId}: no failure logged after the crash`)
        const seen = resultOf(log) as { code?: string; message?: string }
        assert.equal(seen.code, 'STEP_FAILED')
        assert.equal(
          seen.message,
          sessionId === 'spent'
            ? 'Step "charge" failed after 2 attempts; the last threw: gateway timeout 2'
            : 'Step "charge" failed after 1 attempt; the last threw: NonRetryableError: card declined',
        )
      }
    },
  }),
  defineCase({
    id: 'wait.retry.parks-until-due',
    title:
      'a retry delay over parkAfterMs parks the session until the logged due time; a crash before the park keeps that time, and a worker resumes the step then',
    requires: ['leases', 'wakeups'],
    async run(context) {
      const billing = new FlakyBilling(2)
      const harness = payHarness(billing, { attempts: 3, delayMs: 10 * MINUTE, backoff: 3 }, { parkAfterMs: PARK_AFTER_MS })
      const start = context.clock.now()
      // The first host dies after the failure is logged, before the park.
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.parked'), 'before')
      await runUntilCrash(first, (await first.host.open({ sessionId: 'pay' })).send('pay'), 'pay')
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const reopened = await second.host.open({ sessionId: 'pay' })
      const chunks = await drain(reopened.resume())
      const parked = chunks.filter((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === HARNESS_EVENTS.parked)
      assert.equal(parked.length, 1, 'the resumed run parks again')
      assert.equal(reopened.parked?.until, start + 10 * MINUTE, 'until the due time logged before the crash')
      assert.equal(billing.calls.length, 1)
      const worker = createWorker({
        store: await context.openStore(),
        harnesses: harness,
        clock: context.clock,
        workerId: 'worker',
        leaseMs: TEST_LEASE_MS,
        holdMs: MINUTE,
      })
      context.clock.advance(10 * MINUTE - (TEST_LEASE_MS + 1) - 1)
      assert.deepEqual((await worker.poll()).resumed, [], 'not before the due time')
      context.clock.advance(1)
      assert.deepEqual((await worker.poll()).resumed, ['pay'])
      assert.deepEqual(
        billing.calls.map((c) => c.attempt),
        [1, 2],
      )
      // The second failure waits three times as long.
      const [, second2] = failuresOf(await logOf(context, 'pay'))
      assert.equal(Number(second2!.retryAt) - Number(second2!.at), 30 * MINUTE)
      context.clock.advance(30 * MINUTE)
      assert.deepEqual((await worker.poll()).resumed, ['pay'])
      const log = await logOf(context, 'pay')
      assert.deepEqual(
        billing.calls.map((c) => c.attempt),
        [1, 2, 3],
      )
      assert.deepEqual(resultOf(log), { id: 'ch_1' })
      assert.equal(log.filter((r) => r.type === 'harness.turn.finished').length, 1)
      await worker.stop()
    },
  }),
  defineCase({
    id: 'durable.retry.timeouts',
    title:
      "a step's timeoutMs aborts fn's signal and counts as a failed attempt; a tool's timeoutMs settles the call as a tool error and logs nothing after it",
    async run(context) {
      const signals: AbortSignal[] = []
      const slowStep = durableTool(toolDefinition({ name: 'slow', description: 's', inputSchema: z.object({}) }), async (_a, { step }) =>
        step.do('fetch', { attempts: 2, delayMs: 0, timeoutMs: 20 }, ({ attempt, signal }) => {
          signals.push(signal)
          // The first attempt never answers.
          return attempt === 1 ? new Promise<string>(() => {}) : 'fetched'
        }),
      )
      const slowTool = durableTool(
        toolDefinition({ name: 'stuck', description: 's', inputSchema: z.object({}) }),
        async (_a, { step }) => {
          await step.do('hang', ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('late'))))
          return 'never'
        },
        { timeoutMs: 20 },
      )
      const adapter = scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user'
          ? {
              toolCalls: [
                { name: 'slow', args: {} },
                { name: 'stuck', args: {} },
              ],
            }
          : 'Done.',
      )
      const proc = await startCaseMachine(context, defineHarness({ name: 'timeouts', adapter, tools: [slowStep, slowTool] }), 'host')
      await drain((await proc.host.open({ sessionId: 'slow' })).send('go'))
      const log = await logOf(context, 'slow')
      assert.equal(signals.length, 2)
      assert.equal((signals[0]!.reason as Error).name, 'TimeoutError', "the timed-out attempt's signal says why")
      const failures = failuresOf(log)
      assert.deepEqual(
        failures.map((f) => [f.name, f.attempt, f.timedOut, f.final]),
        [['fetch', 1, true, false]],
      )
      const results = log.filter((r) => r.type === 'harness.tool.result')
      assert.deepEqual(
        results.map((r) => [r.toolName, r.ok]),
        [
          ['slow', true],
          ['stuck', false],
        ],
      )
      assert.match(String((results[1]!.result as { error: string }).error), /timed out after 20 ms/)
      assert.deepEqual(
        log.filter((r) => r.type === 'harness.step').map((r) => r.name),
        ['fetch'],
        'the step the tool timeout stopped logged nothing',
      )
    },
  }),
  defineCase({
    id: 'durable.retry.failure-without-secret',
    title: "a failed attempt's error is stored with the session's secrets replaced: no byte of the secret reaches the store",
    requires: ['dump'],
    async run(context) {
      const secret = 'sk_live_retry_9f2Q7p'
      const billing = new FlakyBilling(99, () => new Error(`gateway refused key ${secret}`))
      const proc = await startCaseMachine(context, payHarness(billing, { attempts: 2, delayMs: 0 }), 'host')
      await drain((await proc.host.open({ sessionId: 'pay', secrets: { stripe: secret } })).send('pay'))
      const log = await logOf(context, 'pay')
      assert.deepEqual(
        failuresOf(log).map((f) => f.error),
        [`gateway refused key ${SECRET_MARKER}`, `gateway refused key ${SECRET_MARKER}`],
      )
      const raw = await context.dump()
      assert.ok(raw.includes('gateway refused key'), 'the dump holds the failures')
      assert.ok(!raw.includes(secret), 'the secret is nowhere in the store')
    },
  }),
]
