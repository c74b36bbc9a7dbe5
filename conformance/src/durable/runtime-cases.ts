import assert from 'node:assert/strict'
import { type AnyTool, type ChatMiddleware, type StreamChunk, toolDefinition } from '@tanstack/ai'
import {
  createHost,
  createWorker,
  defineHarness,
  type DurableToolContext,
  durableTool,
  HARNESS_EVENTS,
  type HarnessStore,
} from '@tanstack/ai-harness'
import { LeaseLostError, type LogRecord, MAX_TIME_MS } from '@tanstack/ai-harness/store'
import { recordsOf, type ScriptedReply, scriptedText, TEST_LEASE_MS } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { type CaseContext, defineCase, expectCode, readFrom } from '../case.js'
import { assertWellFormed, drain, FakeBilling, runUntilCrash, startCaseMachine } from './fixtures.js'

const orderSchema = z.object({ orderId: z.string() })

/** The seed's checkout on a fake billing service, with step names that are the same for every order. */
function checkout(billing: FakeBilling) {
  return durableTool(
    toolDefinition({ name: 'checkout', description: 'Charge an order and send the invoice', inputSchema: orderSchema }),
    async ({ orderId }, { step, append }) => {
      const payment = await step.do('charge', ({ idempotencyKey }) => billing.charge(orderId, idempotencyKey))
      await step.do('invoice', ({ idempotencyKey }) => billing.sendInvoice(payment.id, idempotencyKey))
      append([{ type: 'app.receipt', orderId }])
      return { chargeId: payment.id, orderId }
    },
  )
}

const loggedCalls = (records: readonly LogRecord[]) =>
  records.filter((r) => r.type === 'harness.assistant').flatMap((r) => r.toolCalls as Array<{ id: string; modelId?: string }>)

const isStepFor = (name: string, orderId: string) => (records: readonly LogRecord[]) =>
  records.some((r) => r.type === 'harness.step' && r.name === name && JSON.stringify(r.value ?? null).includes(orderId))

const questionsIn = (chunks: readonly StreamChunk[]) =>
  chunks
    .filter((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === HARNESS_EVENTS.question)
    .map((c) => (c as unknown as { value: { questionId: string; rejected?: string } }).value)

async function worker(context: CaseContext, harness: ReturnType<typeof defineHarness>, onChunk?: (chunk: StreamChunk) => void) {
  return createWorker({
    store: await context.openStore(),
    harnesses: harness,
    clock: context.clock,
    leaseMs: TEST_LEASE_MS,
    ...(onChunk ? { onChunk: (_id: string, chunk: StreamChunk) => onChunk(chunk) } : {}),
  })
}

/** Runs `body` in one tool call of a fresh session; returns the session's log. */
async function inOneCall(context: CaseContext, body: (context: DurableToolContext) => Promise<void>) {
  const tool = durableTool(toolDefinition({ name: 'edge', description: 'e', inputSchema: z.object({}) }), async (_a, ctx) => {
    await body(ctx)
    return 'ok'
  })
  const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'edge', args: {} }] } : 'Done.'))
  const proc = await startCaseMachine(context, defineHarness({ name: 'edge', adapter, tools: [tool] }), 'host')
  const session = await proc.host.open({ sessionId: 'edge' })
  await drain(session.send('go'))
  await session.close()
  return readFrom(context.store, 'edge')
}

export const runtimeCases = [
  defineCase({
    id: 'durable.call-id.reused-in-a-later-turn',
    title:
      'a model that reuses a tool-call id in a later turn: the new call runs under its own id in the log, with its own steps and idempotency keys, also after a crash in it',
    async run(context) {
      const billing = new FakeBilling()
      const script: ScriptedReply[] = [
        { toolCalls: [{ id: 'call_0', name: 'checkout', args: { orderId: 'o1' } }] },
        'o1 placed.',
        { toolCalls: [{ id: 'call_0', name: 'checkout', args: { orderId: 'o2' } }] },
        'o2 placed.',
      ]
      const first = await startCaseMachine(
        context,
        defineHarness({ name: 'shop', adapter: scriptedText(script), tools: [checkout(billing)] }),
        'host-1',
      )
      const session = await first.host.open({ sessionId: 'reuse' })
      await drain(session.send('checkout o1'))
      first.store.crashOnAppend(isStepFor('charge', 'ch_2'), 'after')
      await runUntilCrash(first, session.send('checkout o2'), 'the second checkout')
      context.clock.advance(TEST_LEASE_MS + 1)
      const resumed = defineHarness({ name: 'shop', adapter: scriptedText(['o2 placed.']), tools: [checkout(billing)] })
      const second = await startCaseMachine(context, resumed, 'host-2')
      const reopened = await second.host.open({ sessionId: 'reuse' })
      await drain(reopened.resume())
      const entries = await readFrom(context.store, 'reuse')
      assertWellFormed(entries)
      const records = entries.map((e) => e.record)
      assert.deepEqual(
        loggedCalls(records).map((c) => [c.id, c.modelId]),
        [
          ['call_0', undefined],
          ['call_0-2', 'call_0'],
        ],
        'the repeated id is logged as call_0-2, with the model id kept',
      )
      assert.deepEqual([...billing.charges.keys()], ['reuse:call_0:charge', 'reuse:call_0-2:charge'], 'two charges, two keys')
      assert.deepEqual([...billing.invoices.keys()], ['reuse:call_0:invoice', 'reuse:call_0-2:invoice'])
      assert.equal(billing.attempts, 4, 'the stored charge of the second call did not run again')
      assert.deepEqual(
        recordsOf(entries, 'harness.tool.result').map((r) => [r.toolCallId, r.result]),
        [
          ['call_0', { chargeId: 'ch_1', orderId: 'o1' }],
          ['call_0-2', { chargeId: 'ch_2', orderId: 'o2' }],
        ],
      )
      assert.equal(recordsOf(entries, 'app.receipt').length, 2)
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 2)
      await reopened.close()
    },
  }),
  defineCase({
    id: 'durable.call-id.repeated-in-a-batch',
    title: 'the same tool-call id twice in one batch: both calls run, each under its own id in the log',
    async run(context) {
      const billing = new FakeBilling()
      const calls = ['o1', 'o2'].map((orderId) => ({ id: 'dup', name: 'checkout', args: { orderId } }))
      const harness = defineHarness({
        name: 'shop',
        adapter: scriptedText([{ toolCalls: calls }, 'Both placed.']),
        tools: [checkout(billing)],
      })
      const proc = await startCaseMachine(context, harness, 'host')
      const session = await proc.host.open({ sessionId: 'batch' })
      await drain(session.send('checkout both'))
      const entries = await readFrom(context.store, 'batch')
      assertWellFormed(entries)
      assert.deepEqual(
        loggedCalls(entries.map((e) => e.record)).map((c) => c.id),
        ['dup', 'dup-2'],
      )
      assert.deepEqual(new Set(billing.charges.keys()), new Set(['batch:dup:charge', 'batch:dup-2:charge']))
      assert.equal(recordsOf(entries, 'harness.tool.result').length, 2)
      await session.close()
    },
  }),
  defineCase({
    id: 'durable.ask.answer-refused-by-the-tool-reopens',
    title:
      "an answer that passes the logged JSON Schema but fails the tool's own schema opens the question again; a corrected answer from another host completes the call",
    requires: ['leases', 'wakeups'],
    async run(context) {
      const seen: unknown[] = []
      const tool = durableTool(toolDefinition({ name: 'order', description: 'o', inputSchema: z.object({}) }), async (_a, { step }) => {
        const answer = await step.ask({
          name: 'quantity',
          message: 'How many?',
          schema: z.object({ quantity: z.number() }).refine((v) => v.quantity <= 10, { message: 'at most 10' }),
        })
        seen.push(answer)
        return `ordered ${answer.quantity}`
      })
      const adapter = scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'order', args: {} }] } : 'Done.',
      )
      const harness = defineHarness({ name: 'orders', adapter, tools: [tool] })
      const proc = await startCaseMachine(context, harness, 'host')
      const [question] = questionsIn(await drain((await proc.host.open({ sessionId: 'order' })).send('order')))
      assert.ok(question, 'the question is asked')
      await proc.host.answer({ sessionId: 'order', questionId: question.questionId, answer: { quantity: 50 } })
      const chunks: StreamChunk[] = []
      const w = await worker(context, harness, (chunk) => chunks.push(chunk))
      assert.deepEqual((await w.poll()).resumed, ['order'])
      assert.deepEqual(seen, [], 'the tool never saw the refused answer')
      const [again] = questionsIn(chunks)
      assert.equal(again?.questionId, question.questionId, 'the same question is asked again')
      assert.match(String(again?.rejected), /at most 10/)
      assert.equal(recordsOf(await readFrom(context.store, 'order'), 'harness.answer.rejected').length, 1)
      const other = await startCaseMachine(context, harness, 'other-host')
      await other.host.answer({ sessionId: 'order', questionId: question.questionId, answer: { quantity: 5 } })
      await expectCode(
        other.host.answer({ sessionId: 'order', questionId: question.questionId, answer: { quantity: 6 } }),
        'ALREADY_ANSWERED',
        'a second answer to the reopened question',
      )
      assert.deepEqual((await w.poll()).resumed, ['order'])
      assert.deepEqual(seen, [{ quantity: 5 }])
      const entries = await readFrom(context.store, 'order')
      assertWellFormed(entries)
      assert.deepEqual(
        recordsOf(entries, 'harness.tool.result').map((r) => r.result),
        ['ordered 5'],
      )
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'durable.tool-error.harness-code-thrown-by-a-tool',
    title: 'a tool whose own code throws LEASE_LOST gets a tool error, also after a crash: the session is never stuck',
    async run(context) {
      let runs = 0
      const tool = durableTool(toolDefinition({ name: 'reserve', description: 'r', inputSchema: z.object({}) }), async () => {
        runs++
        throw new LeaseLostError('some-other-session')
      })
      const adapter = scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'reserve', args: {} }] } : 'Failed.',
      )
      const harness = defineHarness({ name: 'shop', adapter, tools: [tool] })
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.tool.result'), 'before')
      await runUntilCrash(first, (await first.host.open({ sessionId: 'reserve' })).send('reserve'), 'reserve')
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const reopened = await second.host.open({ sessionId: 'reserve' })
      await drain(reopened.resume())
      const entries = await readFrom(context.store, 'reserve')
      assertWellFormed(entries)
      assert.equal(runs, 2)
      const [result] = recordsOf(entries, 'harness.tool.result')
      assert.equal(result?.ok, false)
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1)
      await reopened.close()
    },
  }),
  defineCase({
    id: 'durable.middleware-tool.crash',
    title: 'a durable tool that a middleware adds runs durably: after a crash between its steps, only the rest run',
    async run(context) {
      const billing = new FakeBilling()
      const tool = checkout(billing)
      const adds: ChatMiddleware = {
        name: 'adds-checkout',
        onConfig: (_ctx, config) => ({ tools: [...config.tools.filter((t: AnyTool) => t.name !== 'checkout'), tool] }),
      }
      const adapter = scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'checkout', args: { orderId: 'o1' } }] } : 'Placed.',
      )
      const harness = defineHarness({ name: 'shop', adapter, middleware: [adds] })
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend(isStepFor('charge', 'ch_1'), 'after')
      await runUntilCrash(first, (await first.host.open({ sessionId: 'mw' })).send('checkout o1'), 'checkout')
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const reopened = await second.host.open({ sessionId: 'mw' })
      await drain(reopened.resume())
      const entries = await readFrom(context.store, 'mw')
      assertWellFormed(entries)
      const [call] = loggedCalls(entries.map((e) => e.record))
      assert.deepEqual([...billing.charges.keys()], [`mw:${call!.id}:charge`], 'the key names the session, not plain:')
      assert.equal(billing.attempts, 2, 'charge once, invoice once')
      const [result] = recordsOf(entries, 'harness.tool.result')
      assert.deepEqual([result?.ok, result?.cut], [true, false])
      assert.equal(recordsOf(entries, 'app.receipt').length, 1)
      await reopened.close()
    },
  }),
  defineCase({
    id: 'durable.step.after-the-call-settled',
    title: 'step.do, step.sleep, step.ask and append after their tool call ended throw TOOL_CALL_SETTLED and write nothing',
    async run(context) {
      let kept: DurableToolContext | undefined
      const before = await inOneCall(context, async (ctx) => {
        kept = ctx
      })
      let ran = 0
      for (const late of [
        () => kept!.step.do('late', () => ran++),
        () => kept!.step.sleep('late-nap', 1),
        () => kept!.step.ask({ name: 'late', message: 'Still there?', schema: z.object({ ok: z.boolean() }) }),
        async () => kept!.append([{ type: 'app.late' }]),
      ]) {
        await expectCode(late(), 'TOOL_CALL_SETTLED', 'a step call after the call ended')
      }
      assert.equal(ran, 0, 'no step function ran')
      assert.deepEqual(await readFrom(context.store, 'edge'), before, 'nothing was written')
    },
  }),
  defineCase({
    id: 'durable.sleep.past-max-time',
    title: 'a sleep that would wake after MAX_TIME_MS is refused with INVALID_ARGUMENT before anything is written',
    async run(context) {
      const codes: string[] = []
      const entries = await inOneCall(context, async ({ step }) => {
        for (const ms of [MAX_TIME_MS, Number.MAX_VALUE]) {
          await step.sleep(`nap-${ms}`, ms).then(
            () => codes.push('none'),
            (error: { code?: string }) => codes.push(String(error.code)),
          )
        }
      })
      assert.deepEqual(codes, ['INVALID_ARGUMENT', 'INVALID_ARGUMENT'])
      assert.equal(recordsOf(entries, 'harness.sleep').length, 0, 'no sleep record')
      assert.equal(recordsOf(entries, 'harness.parked').length, 0, 'no park')
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1, 'the turn went on')
    },
  }),
  defineCase({
    id: 'durable.names.checked-before-side-effects',
    title: 'a 1 MB step name, sleep name or question, or a name with NUL or a lone surrogate, is refused before fn runs and writes nothing',
    async run(context) {
      const megabyte = 'n'.repeat(1024 * 1024)
      const schema = z.object({ ok: z.boolean() })
      let ran = 0
      const codes: string[] = []
      const entries = await inOneCall(context, async ({ step }) => {
        for (const attempt of [
          () => step.do(megabyte, () => ran++),
          () => step.do('nul\u0000name', () => ran++),
          () => step.do('half \ud800', () => ran++),
          () => step.sleep(megabyte, 1),
          () => step.ask({ name: megabyte, message: 'OK?', schema }),
          () => step.ask({ name: 'q', message: megabyte, schema }),
          () => step.ask({ name: 'q', message: 'OK?', schema: z.object({ ok: z.boolean().describe(megabyte) }) }),
        ]) {
          await attempt().then(
            () => codes.push('none'),
            (error: { code?: string }) => codes.push(String(error.code)),
          )
        }
      })
      assert.deepEqual(codes, Array(7).fill('INVALID_ARGUMENT'))
      assert.equal(ran, 0, 'no step function ran')
      for (const type of ['harness.step', 'harness.sleep', 'harness.ask']) assert.equal(recordsOf(entries, type).length, 0, type)
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1, 'the turn went on')
    },
  }),
  defineCase({
    id: 'durable.session.deleted-while-asking',
    title: "a session deleted while its question is being asked reads 'deleted', and its host writes nothing more to it",
    async run(context) {
      const inner = await context.openStore()
      const deleting: HarnessStore = {
        limits: inner.limits,
        leases: inner.leases,
        wakeups: inner.wakeups,
        read: (logId, options) => inner.read(logId, options),
        delete: (logId) => inner.delete(logId),
        ...(inner.now ? { now: () => inner.now!() } : {}),
        async append(logId, expectedSeq, records, options) {
          const result = await inner.append(logId, expectedSeq, records, options)
          if (records.some((r) => r.type === 'harness.ask')) await inner.delete(logId)
          return result
        },
      }
      const tool = durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) => {
        const answer = await step.ask({ name: 'ok', message: 'Go?', schema: z.object({ ok: z.boolean() }) })
        return answer.ok ? 'yes' : 'no'
      })
      const adapter = scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'Done.',
      )
      const host = createHost({
        store: deleting,
        harnesses: defineHarness({ name: 'h', adapter, tools: [tool] }),
        clock: context.clock,
        leaseMs: TEST_LEASE_MS,
      })
      const session = await host.open({ sessionId: 'gone' })
      await expectCode(drain(session.send('go')), 'LOG_CONFLICT', 'the host whose session was deleted')
      assert.equal(session.status, 'deleted')
      assert.deepEqual(await readFrom(context.store, 'gone'), [], 'nothing was written after the delete')
    },
  }),
]
