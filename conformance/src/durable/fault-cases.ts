import assert from 'node:assert/strict'
import { toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool, type Harness, HARNESS_EVENTS } from '@tanstack/ai-harness'
import { LogConflictError } from '@tanstack/ai-harness/store'
import { appendOf, faultyStore, recordsOf, scriptedText, TEST_LEASE_MS } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { type CaseContext, defineCase, expectCode, readFrom } from '../case.js'
import { assertWellFormed, drain } from './fixtures.js'

/**
 * The runtime over a store that misbehaves the way networks do: a reply lost after the
 * write ran, a call that never answers, a second process with the same host id. Each
 * case wraps a store instance of the case with the fault wrapper of
 * `@tanstack/ai-harness/testing`, so the same faults reach every store.
 */

const chat = () => defineHarness({ name: 'chat', adapter: scriptedText(() => 'Hello.') })

function asker(): Harness {
  const confirm = durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) => {
    const answer = await step.ask({ name: 'ok', message: 'Proceed?', schema: z.object({ ok: z.boolean() }) })
    return answer.ok ? 'yes' : 'no'
  })
  return defineHarness({
    name: 'asker',
    adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'Done.')),
    tools: [confirm],
  })
}

/** A host on a fresh store instance of the case (another "process"), with the fault wrapper around it. */
async function faultyProcess(
  context: CaseContext,
  harness: Harness,
  hostId: string,
  timings: { storeTimeoutMs?: number; stopTimeoutMs?: number } = {},
) {
  const store = faultyStore(await context.openStore())
  const host = createHost({ store, harnesses: harness, clock: context.clock, leaseMs: TEST_LEASE_MS, hostId, ...timings })
  return { store, host }
}

async function worker(context: CaseContext, harness: Harness) {
  return createWorker({
    store: await context.openStore(),
    harnesses: harness,
    clock: context.clock,
    leaseMs: TEST_LEASE_MS,
    workerId: 'worker',
  })
}

const needs = ['leases', 'wakeups'] as const

export const faultCases = [
  defineCase({
    id: 'fault.same-host-id',
    title: 'a second process with the same host id waits (LEASE_HELD) while the first drives the session, and takes over once it lets go',
    requires: ['leases'],
    async run(context) {
      const first = await faultyProcess(context, chat(), 'same-id')
      const second = await faultyProcess(context, chat(), 'same-id')
      const session = await first.host.open({ sessionId: 'twin' })
      await expectCode(second.host.open({ sessionId: 'twin' }), 'LEASE_HELD', 'open by the second process')
      await drain(session.send('one'))
      await session.close()
      await drain((await second.host.open({ sessionId: 'twin' })).send('two'))
      const entries = await readFrom(context.store, 'twin')
      assertWellFormed(entries)
      const started = recordsOf(entries, 'harness.turn.started')
      assert.deepEqual(
        started.map((r) => r.host),
        ['same-id', 'same-id'],
        'the log names the host id',
      )
      assert.ok(Number(started[1]!.fence) > Number(started[0]!.fence), 'the second process drove with a newer fence')
    },
  }),
  defineCase({
    id: 'fault.store-call-never-answers',
    title:
      'a store call that never answers (after the write ran) fails the turn within the deadline; close returns, the wakeup stays, a worker finishes the turn',
    requires: needs,
    async run(context) {
      const proc = await faultyProcess(context, chat(), 'host', { storeTimeoutMs: 1_000, stopTimeoutMs: 1_000 })
      const session = await proc.host.open({ sessionId: 'hung' })
      const hung = proc.store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'hang', run: true } })
      // From then on the connection is gone: nothing answers.
      void hung.hit.then(() => proc.store.inject({ fault: { kind: 'hang' }, times: Number.POSITIVE_INFINITY }))
      await expectCode(drain(session.send('hi')), 'STORE_UNAVAILABLE', 'the turn whose append never answered')
      await session.close()
      await proc.host.shutdown()
      assert.equal(recordsOf(await readFrom(context.store, 'hung'), 'harness.turn.started').length, 1)

      context.clock.advance(TEST_LEASE_MS + 1)
      const w = await worker(context, chat())
      assert.deepEqual((await w.poll()).resumed, ['hung'], 'the wakeup set before the turn began brought a worker')
      const entries = await readFrom(context.store, 'hung')
      assertWellFormed(entries)
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'fault.ambiguous-turn-started',
    title: 'a turn.started whose reply is lost and cannot be read back: close keeps the wakeup, and a worker finishes the turn',
    requires: needs,
    async run(context) {
      const proc = await faultyProcess(context, chat(), 'host')
      const session = await proc.host.open({ sessionId: 'doubt' })
      proc.store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'lose-reply' } })
      const reads = proc.store.inject({ match: 'read', fault: { kind: 'fail' }, times: Number.POSITIVE_INFINITY })
      await expectCode(drain(session.send('hi')), 'STORE_UNAVAILABLE', 'a send whose outcome is unknown')
      reads.remove()
      await session.close()
      context.clock.advance(TEST_LEASE_MS + 1)
      const w = await worker(context, chat())
      assert.deepEqual((await w.poll()).resumed, ['doubt'])
      const entries = await readFrom(context.store, 'doubt')
      assertWellFormed(entries)
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'fault.ambiguous-answer',
    title: 'an answer whose append landed but whose reply was lost succeeds, makes the session due, and is not taken twice',
    requires: needs,
    async run(context) {
      const asking = await faultyProcess(context, asker(), 'host')
      const chunks = await drain((await asking.host.open({ sessionId: 'ask' })).send('go'))
      const question = chunks.find((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === HARNESS_EVENTS.question) as unknown as {
        value: { questionId: string }
      }
      assert.ok(question, 'the session asked its question')
      const answering = await faultyProcess(context, asker(), 'other')
      // The store's own retry met the answer its lost first try had written.
      answering.store.inject({ match: appendOf('harness.answer'), fault: { kind: 'lose-reply', error: new LogConflictError('ask', 0) } })
      await answering.host.answer({ sessionId: 'ask', questionId: question.value.questionId, answer: { ok: true } })
      await answering.host.answer({ sessionId: 'ask', questionId: question.value.questionId, answer: { ok: true } })
      await expectCode(
        answering.host.answer({ sessionId: 'ask', questionId: question.value.questionId, answer: { ok: false } }),
        'ALREADY_ANSWERED',
        'a different second answer',
      )
      assert.equal(recordsOf(await readFrom(context.store, 'ask'), 'harness.answer').length, 1)
      const w = await worker(context, asker())
      assert.deepEqual((await w.poll()).resumed, ['ask'], 'the answer made the session due')
      const entries = await readFrom(context.store, 'ask')
      assertWellFormed(entries)
      assert.equal(recordsOf(entries, 'harness.tool.result')[0]?.result, 'yes')
      await w.stop()
    },
  }),
]
