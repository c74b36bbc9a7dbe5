import assert from 'node:assert/strict'
import { type StreamChunk, toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool, HARNESS_EVENTS } from '@tanstack/ai-harness'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { recordsOf, scriptedText, TEST_LEASE_MS } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { type CaseContext, defineCase, expectCode, readFrom } from '../case.js'
import { assertWellFormed, drain, runUntilCrash, startCaseMachine } from './fixtures.js'

const HOUR = 3_600_000
const callOnce = (name: string) =>
  scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name, args: {} }] } : 'Finished.'))

const customEvents = (chunks: StreamChunk[], name: string) =>
  chunks.filter((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === name).map((c) => (c as { value?: unknown }).value)

/** A tool that does a step, sleeps an hour, does another step. */
function sleeperHarness(runs: string[]) {
  const tool = durableTool(toolDefinition({ name: 'nap', description: 'n', inputSchema: z.object({}) }), async (_a, { step }) => {
    await step.do('before', () => {
      runs.push('before')
    })
    await step.sleep('nap', HOUR)
    await step.do('after', () => {
      runs.push('after')
    })
    return 'rested'
  })
  return defineHarness({ name: 'sleeper', adapter: callOnce('nap'), tools: [tool] })
}

/** A tool that asks a person to approve, then acts on the answer. */
function approvalHarness(seen: unknown[]) {
  const tool = durableTool(toolDefinition({ name: 'refund', description: 'r', inputSchema: z.object({}) }), async (_a, { step }) => {
    const answer = await step.ask({
      name: 'approve',
      message: 'Refund order 42?',
      schema: z.object({ approve: z.boolean(), note: z.string().optional() }),
    })
    seen.push(answer)
    return answer.approve ? 'refunded' : 'kept'
  })
  return defineHarness({ name: 'approvals', adapter: callOnce('refund'), tools: [tool] })
}

async function worker(context: CaseContext, harness: ReturnType<typeof defineHarness>, id: string) {
  return createWorker({
    store: await context.openStore(),
    harnesses: harness,
    clock: context.clock,
    workerId: id,
    leaseMs: TEST_LEASE_MS,
    holdMs: 60_000,
  })
}

const waits = ['leases', 'wakeups'] as const

export const waitCases = [
  defineCase({
    id: 'wait.sleep.parks-and-worker-wakes',
    title: 'a long step.sleep logs its wake time, parks the session with a wakeup, and a worker resumes it at the wake time',
    requires: waits,
    async run(context) {
      const runs: string[] = []
      const harness = sleeperHarness(runs)
      const proc = await startCaseMachine(context, harness, 'host')
      const session = await proc.host.open({ sessionId: 'nap' })
      const start = context.clock.now()
      const chunks = await drain(session.send('sleep'))
      assert.deepEqual(customEvents(chunks, HARNESS_EVENTS.parked), [
        { reason: 'sleep', until: start + HOUR, toolCallId: (session.parked ?? { toolCallId: '?' }).toolCallId },
      ])
      assert.equal(session.status, 'parked')
      const sleeps = recordsOf(await readFrom(context.store, 'nap'), 'harness.sleep')
      assert.deepEqual(
        sleeps.map((r) => r.wakeAt),
        [start + HOUR],
      )
      assert.deepEqual(await context.store.wakeups!.due(10), [], 'nothing is due before the wake time')
      const w = await worker(context, harness, 'worker-1')
      assert.deepEqual((await w.poll()).resumed, [])
      context.clock.advance(HOUR)
      assert.deepEqual((await w.poll()).resumed, ['nap'])
      const entries = await readFrom(context.store, 'nap')
      assertWellFormed(entries)
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1)
      assert.deepEqual(runs, ['before', 'after'], 'each step ran once')
      assert.deepEqual(await context.store.wakeups!.due(10), [], 'the finished session has no wakeup')
      await w.stop()
    },
  }),
  defineCase({
    id: 'wait.sleep.wake-time-kept-across-crash',
    title: 'the wake time is logged on the first run and kept across a crash; a run after the wake time returns at once',
    requires: waits,
    async run(context) {
      const runs: string[] = []
      const harness = sleeperHarness(runs)
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.parked'), 'before')
      const start = context.clock.now()
      const session = await first.host.open({ sessionId: 'nap' })
      await runUntilCrash(first, session.send('sleep'), 'sleep')
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const reopened = await second.host.open({ sessionId: 'nap' })
      const chunks = await drain(reopened.resume())
      assert.equal(customEvents(chunks, HARNESS_EVENTS.parked).length, 1, 'the resumed call parks again until the same wake time')
      const sleeps = recordsOf(await readFrom(context.store, 'nap'), 'harness.sleep')
      assert.deepEqual(
        sleeps.map((r) => r.wakeAt),
        [start + HOUR],
        'one sleep record: the wake time did not move',
      )
      context.clock.advance(HOUR)
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, ['nap'])
      assert.deepEqual(runs, ['before', 'after'])
      await w.stop()
    },
  }),
  defineCase({
    id: 'wait.ask.answer-resumes',
    title:
      'step.ask logs the question and parks; any host answers (a bad answer is refused and writes nothing); a worker resumes with the answer',
    requires: waits,
    async run(context) {
      const seen: unknown[] = []
      const harness = approvalHarness(seen)
      const proc = await startCaseMachine(context, harness, 'host')
      const session = await proc.host.open({ sessionId: 'refund' })
      const chunks = await drain(session.send('refund please'))
      const [question] = customEvents(chunks, HARNESS_EVENTS.question) as Array<{
        questionId: string
        message: string
        schema: Record<string, unknown>
      }>
      assert.ok(question, 'the stream carries the question')
      assert.equal(question.message, 'Refund order 42?')
      assert.equal((question.schema as { type?: string }).type, 'object', 'the question carries its JSON Schema')
      assert.equal(recordsOf(await readFrom(context.store, 'refund'), 'harness.ask').length, 1)
      const other = await startCaseMachine(context, harness, 'other-host')
      const before = (await readFrom(context.store, 'refund')).length
      await expectCode(
        other.host.answer({ sessionId: 'refund', questionId: question.questionId, answer: { approve: 'yes' } }),
        'ANSWER_INVALID',
        'bad answer',
      )
      assert.equal((await readFrom(context.store, 'refund')).length, before, 'a refused answer writes nothing')
      await expectCode(
        other.host.answer({ sessionId: 'refund', questionId: 'nope', answer: { approve: true } }),
        'QUESTION_NOT_FOUND',
        'unknown question',
      )
      await other.host.answer({ sessionId: 'refund', questionId: question.questionId, answer: { approve: true, note: 'ok' } })
      await expectCode(
        other.host.answer({ sessionId: 'refund', questionId: question.questionId, answer: { approve: false } }),
        'ALREADY_ANSWERED',
        'second answer',
      )
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, ['refund'], 'the answer made the session due at once')
      assert.deepEqual(seen, [{ approve: true, note: 'ok' }])
      const entries = await readFrom(context.store, 'refund')
      assertWellFormed(entries)
      assert.equal(recordsOf(entries, 'harness.tool.result')[0]?.result, 'refunded')
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'wait.ask.listed-as-waiting',
    title:
      'a session parked on step.ask is listed by sessions.waiting (and a sleeping one is not); the answer takes it off the list, and the finished session stays listed by sessions.list',
    requires: [...waits, 'sessions'],
    async run(context) {
      const seen: unknown[] = []
      const proc = await startCaseMachine(context, approvalHarness(seen), 'host')
      const asking = await proc.host.open({ sessionId: 'refund' })
      const chunks = await drain(asking.send('refund please'))
      const [question] = customEvents(chunks, HARNESS_EVENTS.question) as Array<{ questionId: string }>
      const sleeper = await startCaseMachine(context, sleeperHarness([]), 'sleeper')
      await drain((await sleeper.host.open({ sessionId: 'nap' })).send('sleep'))
      const sessions = context.store.sessions!
      assert.deepEqual(await sessions.waiting(), ['refund'], 'the session that asks waits for a person; the sleeping one does not')
      assert.deepEqual(await sessions.list(), ['nap', 'refund'])
      await proc.host.answer({ sessionId: 'refund', questionId: question!.questionId, answer: { approve: true } })
      assert.deepEqual(await sessions.waiting(), [], 'the answered session waits for nobody')
      const w = await worker(context, approvalHarness(seen), 'worker')
      assert.deepEqual((await w.poll()).resumed, ['refund'])
      assert.deepEqual(await sessions.waiting(), [])
      assert.deepEqual(await sessions.list(), ['nap', 'refund'])
      await w.stop()
    },
  }),
  defineCase({
    id: 'wait.ask.answer-while-parking',
    title: 'an answer that lands while the session is still parking makes it due: no answer is ever lost',
    requires: waits,
    async run(context) {
      const seen: unknown[] = []
      const harness = approvalHarness(seen)
      const answerer = await startCaseMachine(context, harness, 'answering-host')
      const inner = await context.openStore()
      // The moment the park is logged, another host answers, before the parking host is done.
      const racing: typeof inner = {
        ...inner,
        async append(logId, expectedSeq, records) {
          const result = await inner.append(logId, expectedSeq, records)
          if (records.some((r) => r.type === 'harness.parked')) {
            const ask = recordsOf(await readFrom(inner, logId), 'harness.ask')[0]!
            await answerer.host.answer({ sessionId: logId, questionId: `${ask.toolCallId}:${ask.name}`, answer: { approve: true } })
          }
          return result
        },
      }
      const host = createHost({ store: racing, harnesses: harness, clock: context.clock, leaseMs: TEST_LEASE_MS, hostId: 'parking-host' })
      const session = await host.open({ sessionId: 'refund' })
      await drain(session.send('refund please'))
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, ['refund'], 'the answered session is due at once')
      assert.deepEqual(seen, [{ approve: true }])
      assert.equal(recordsOf(await readFrom(context.store, 'refund'), 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'wait.ask.logged-answer-after-crash',
    title: 'after a crash, step.ask returns the logged answer without asking again',
    requires: waits,
    async run(context) {
      const seen: unknown[] = []
      const harness = approvalHarness(seen)
      const proc = await startCaseMachine(context, harness, 'host')
      const session = await proc.host.open({ sessionId: 'refund' })
      const chunks = await drain(session.send('refund please'))
      const [question] = customEvents(chunks, HARNESS_EVENTS.question) as Array<{ questionId: string }>
      await proc.host.answer({ sessionId: 'refund', questionId: question!.questionId, answer: { approve: false } })
      const resumer = await startCaseMachine(context, harness, 'resumer')
      resumer.store.crashOnAppend((records: readonly LogRecord[]) => records.some((r) => r.type === 'harness.tool.result'), 'before')
      const reopened = await resumer.host.open({ sessionId: 'refund' })
      await runUntilCrash(resumer, reopened.resume(), 'resume after the answer')
      context.clock.advance(TEST_LEASE_MS + 1)
      const last = await startCaseMachine(context, harness, 'last')
      const again = await last.host.open({ sessionId: 'refund' })
      const after = await drain(again.resume())
      assert.equal(customEvents(after, HARNESS_EVENTS.question).length, 0, 'no second question')
      assert.deepEqual(seen, [{ approve: false }, { approve: false }])
      const entries = await again.entries()
      assert.equal(recordsOf(entries, 'harness.ask').length, 1)
      assert.equal(recordsOf(entries, 'harness.answer').length, 1)
      assert.equal(recordsOf(entries, 'harness.tool.result')[0]?.result, 'kept')
      await again.close()
    },
  }),
  defineCase({
    id: 'wait.worker.dead-host',
    title: "while a host drives a turn the session's wakeup sits at the lease's expiry, so a worker finishes the turn of a host that died",
    requires: waits,
    async run(context) {
      const runs: string[] = []
      const tool = durableTool(toolDefinition({ name: 'work', description: 'w', inputSchema: z.object({}) }), async (_a, { step }) => {
        await step.do('one', () => {
          runs.push('one')
        })
        await step.do('two', () => {
          runs.push('two')
        })
        return 'done'
      })
      const harness = defineHarness({ name: 'work', adapter: callOnce('work'), tools: [tool] })
      const proc = await startCaseMachine(context, harness, 'doomed-host')
      proc.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step' && r.name === 'one'), 'after')
      const session = await proc.host.open({ sessionId: 'job' })
      await runUntilCrash(proc, session.send('go'), 'work')
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, [], 'not before the lease expires')
      context.clock.advance(TEST_LEASE_MS)
      assert.deepEqual((await w.poll()).resumed, ['job'])
      assert.deepEqual(runs, ['one', 'two'])
      assert.equal(recordsOf(await readFrom(context.store, 'job'), 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'wait.handoff.resumed-at-once',
    title: 'a host stopped for a deploy leaves its running turn open, and a worker resumes it at once, without waiting for the lease',
    requires: waits,
    async run(context) {
      const runs: string[] = []
      let release: () => void = () => {}
      const gate = new Promise<void>((resolve) => {
        release = resolve
      })
      let entered: () => void = () => {}
      const inside = new Promise<void>((resolve) => {
        entered = resolve
      })
      let waited = false
      const tool = durableTool(toolDefinition({ name: 'work', description: 'w', inputSchema: z.object({}) }), async (_a, { step }) => {
        await step.do('one', () => {
          runs.push('one')
        })
        if (!waited) {
          waited = true
          entered()
          await gate
        }
        await step.do('two', () => {
          runs.push('two')
        })
        return 'done'
      })
      const harness = defineHarness({ name: 'work', adapter: callOnce('work'), tools: [tool] })
      const proc = await startCaseMachine(context, harness, 'deploying-host')
      const session = await proc.host.open({ sessionId: 'job' })
      const streaming = drain(session.send('go')).catch((error: unknown) => error)
      await inside
      const stopping = proc.host.shutdown()
      release()
      await stopping
      await streaming
      assert.deepEqual(runs, ['one'], 'the handed-off run wrote nothing after the hand-off')
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, ['job'], 'resumed at once: same clock, no lease expiry')
      assert.deepEqual(runs, ['one', 'two'])
      const entries = await readFrom(context.store, 'job')
      assertWellFormed(entries)
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'wait.cancel.not-resumed',
    title: 'a turn the user cancelled ends cancelled: no worker resumes it and its question takes no answer',
    requires: waits,
    async run(context) {
      const seen: unknown[] = []
      const harness = approvalHarness(seen)
      const proc = await startCaseMachine(context, harness, 'host')
      const session = await proc.host.open({ sessionId: 'refund' })
      const chunks = await drain(session.send('refund please'))
      const [question] = customEvents(chunks, HARNESS_EVENTS.question) as Array<{ questionId: string }>
      const again = await proc.host.open({ sessionId: 'refund' })
      await again.cancel('the customer changed their mind')
      await again.close()
      const entries = await readFrom(context.store, 'refund')
      assert.equal(recordsOf(entries, 'harness.turn.cancelled').length, 1)
      await expectCode(
        proc.host.answer({ sessionId: 'refund', questionId: question!.questionId, answer: { approve: true } }),
        'QUESTION_NOT_FOUND',
        'answer after cancel',
      )
      context.clock.advance(TEST_LEASE_MS * 10)
      const w = await worker(context, harness, 'worker')
      const result = await w.poll()
      assert.deepEqual(result.resumed, [])
      assert.deepEqual(seen, [])
      await w.stop()
    },
  }),
]
