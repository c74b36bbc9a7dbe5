import assert from 'node:assert/strict'
import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import { DEFAULT_CUT_TOOL_ERROR, SecretScanner } from '@tanstack/ai-harness/log'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { recordsOf, scriptedText, TEST_LEASE_MS } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { type CaseContext, defineCase, expectCode, readFrom } from '../case.js'
import { assertWellFormed, checkoutDefinition, checkoutModel, drain, FakeBilling, runUntilCrash, startCaseMachine } from './fixtures.js'

const isStep = (prefix: string) => (records: readonly LogRecord[]) =>
  records.some((r) => r.type === 'harness.step' && String(r.name).startsWith(prefix))
const isResult = (records: readonly LogRecord[]) => records.some((r) => r.type === 'harness.tool.result')

/** The seed's checkout tool on a fake billing service, plus an app record. */
function checkoutHarness(billing: FakeBilling) {
  const checkout = durableTool(checkoutDefinition(), async ({ orderId }, { step, append }) => {
    const payment = await step.do(`charge:${orderId}`, ({ idempotencyKey }) => billing.charge(orderId, idempotencyKey))
    await step.do(`invoice:${payment.id}`, ({ idempotencyKey }) => billing.sendInvoice(payment.id, idempotencyKey))
    append([{ type: 'app.receipt', orderId, chargeId: payment.id }])
    return { chargeId: payment.id }
  })
  return defineHarness({ name: 'shop', adapter: checkoutModel(), tools: [checkout] })
}

/** Crashes a checkout at `crash`, restarts, resumes, and returns what happened. */
async function crashAndResume(context: CaseContext, crash: { match: (r: readonly LogRecord[]) => boolean; point: 'before' | 'after' }) {
  const billing = new FakeBilling()
  const harness = checkoutHarness(billing)
  const first = await startCaseMachine(context, harness, 'host-1')
  first.store.crashOnAppend(crash.match, crash.point)
  const session = await first.host.open({ sessionId: 'order-session' })
  await runUntilCrash(first, session.send('checkout o1'), 'checkout')
  const beforeRecovery = await readFrom(context.store, 'order-session')
  context.clock.advance(TEST_LEASE_MS + 1)
  const second = await startCaseMachine(context, harness, 'host-2')
  const reopened = await second.host.open({ sessionId: 'order-session' })
  assert.equal(reopened.needsRecovery, true, 'the reopened session knows its turn was cut')
  await drain(reopened.resume())
  const entries = await reopened.entries()
  assertWellFormed(entries)
  assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1, 'the turn finished')
  assert.equal(billing.charges.size, 1, 'one charge')
  assert.equal(billing.invoices.size, 1, 'one invoice')
  const [key] = billing.charges.keys()
  const call = recordsOf(entries, 'harness.assistant')[0]!.toolCalls as Array<{ id: string }>
  assert.equal(key, `order-session:${call[0]!.id}:charge:o1`, 'the idempotency key is logId:toolCallId:name')
  assert.equal(recordsOf(entries, 'app.receipt').length, 1, 'the app record landed once')
  await reopened.close()
  return { billing, entries, beforeRecovery }
}

export const durableCases = [
  defineCase({
    id: 'durable.step.crash-before-step-logged',
    title: 'a crash after a step ran but before it was logged runs it again with the same idempotency key',
    async run(context) {
      const { billing } = await crashAndResume(context, { match: isStep('charge:'), point: 'before' })
      assert.equal(billing.refused, 1, 'the repeated charge was refused by its key')
    },
  }),
  defineCase({
    id: 'durable.step.crash-between-steps',
    title: 'a crash between two steps: the finished step returns its stored value, only the rest run',
    async run(context) {
      const { billing } = await crashAndResume(context, { match: isStep('charge:'), point: 'after' })
      assert.equal(billing.attempts, 2, 'charge once, invoice once')
      assert.equal(billing.refused, 0)
    },
  }),
  defineCase({
    id: 'durable.step.crash-before-result',
    title: 'a crash after the last step but before the result: no step runs again, and the cut call wrote no records',
    async run(context) {
      const { billing, beforeRecovery } = await crashAndResume(context, { match: isResult, point: 'before' })
      assert.equal(billing.attempts, 2)
      assert.ok(!beforeRecovery.some((e) => e.record.type === 'app.receipt'), 'records of a cut call never landed')
      assert.ok(
        beforeRecovery.some((e) => e.record.type === 'harness.step'),
        'steps were in the log before the crash',
      )
    },
  }),
  defineCase({
    id: 'durable.step.json-only',
    title: 'a step value that is not JSON is refused with STEP_NOT_JSON and its path, and nothing is logged',
    async run(context) {
      class Money {
        constructor(readonly cents: number) {}
        toString() {
          return `${this.cents}`
        }
      }
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      const bad: Array<[string, unknown, string]> = [
        ['date', { at: new Date(0) }, '$.at'],
        ['map', new Map([['a', 1]]), '$'],
        ['set', { s: new Set([1]) }, '$.s'],
        ['class', { price: new Money(5) }, '$.price'],
        ['hole', [1, undefined], '$[1]'],
        ['bigint', { n: 10n }, '$.n'],
        ['nan', { n: Number.NaN }, '$.n'],
        ['infinity', [Number.POSITIVE_INFINITY], '$[0]'],
        ['fn', { f: () => 1 }, '$.f'],
        ['cycle', cyclic, '$.self'],
      ]
      const outcomes: Record<string, unknown> = {}
      const tool = durableTool(toolDefinition({ name: 'probe', description: 'p', inputSchema: z.object({}) }), async (_args, { step }) => {
        for (const [name, value] of bad) {
          try {
            await step.do(name, () => value as never)
            outcomes[name] = 'accepted'
          } catch (error) {
            outcomes[name] = { code: (error as { code?: string }).code, path: (error as { path?: string }).path }
          }
        }
        const ok = await step.do('ok', () => ({ list: [1, null], gone: undefined, nested: { s: 'x' } }))
        const nothing = await step.do('void', () => undefined)
        return { ok, nothing: nothing === undefined }
      })
      const harness = defineHarness({
        name: 'probe',
        adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'probe', args: {} }] } : 'ok')),
        tools: [tool],
      })
      const proc = await startCaseMachine(context, harness, 'host')
      const session = await proc.host.open({ sessionId: 'json' })
      await drain(session.send('go'))
      for (const [name, , path] of bad) assert.deepEqual(outcomes[name], { code: 'STEP_NOT_JSON', path }, name)
      const entries = await session.entries()
      const steps = recordsOf(entries, 'harness.step')
      assert.deepEqual(
        steps.map((s) => s.name),
        ['ok', 'void'],
        'only the JSON steps were logged',
      )
      assert.deepEqual(steps[0]!.value, { list: [1, null], nested: { s: 'x' } }, 'the logged value is the JSON copy')
      assert.ok(!('value' in steps[1]!), 'a step that returned nothing is logged without a value')
      const result = recordsOf(entries, 'harness.tool.result')[0]!
      assert.deepEqual(result.result, { ok: { list: [1, null], nested: { s: 'x' } }, nothing: true }, 'step.do returned the JSON copy')
      await session.close()
    },
  }),
  defineCase({
    id: 'durable.step.secret-refused',
    title:
      'a step value or record holding a session secret is refused, on the first run and after a crash, and no byte of it reaches the store',
    requires: ['dump'],
    async run(context) {
      const secret = 'sk_live_9fQ2xV7pL0aZ3mN8'
      const attempts: string[] = []
      const tool = durableTool(
        toolDefinition({ name: 'pay', description: 'p', inputSchema: z.object({}) }),
        async (_args, { step, append, secret: read }) => {
          const key = await read('apiKey')
          for (const [name, value] of [
            ['plain', { token: key }],
            ['base64', { blob: Buffer.from(`auth:${key}`).toString('base64') }],
            ['hex', [Buffer.from(key).toString('hex')]],
            ['url', `https://pay.test/?k=${encodeURIComponent(key)}`],
          ] as const) {
            try {
              await step.do(`leak:${name}`, () => value)
              attempts.push(`${name}:accepted`)
            } catch (error) {
              attempts.push(`${name}:${(error as { code?: string }).code}`)
            }
          }
          try {
            append([{ type: 'app.audit', header: `Bearer ${key}` }])
            attempts.push('append:accepted')
          } catch (error) {
            attempts.push(`append:${(error as { code?: string }).code}`)
          }
          await step.do('charge', () => ({ chargeId: 'ch_1' }))
          return `charged with ${key}`
        },
      )
      const harness = defineHarness({
        name: 'pay',
        adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'pay', args: {} }] } : 'paid')),
        tools: [tool],
      })
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend(isResult, 'before')
      const session = await first.host.open({ sessionId: 'secret', secrets: { apiKey: secret } })
      await runUntilCrash(first, session.send('pay'), 'pay')
      const expected = ['plain:STEP_SECRET', 'base64:STEP_SECRET', 'hex:STEP_SECRET', 'url:STEP_SECRET', 'append:RECORD_SECRET']
      assert.deepEqual(attempts, expected, 'first run')
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const reopened = await second.host.open({ sessionId: 'secret', secrets: { apiKey: secret } })
      const chunks = await drain(reopened.resume())
      assert.deepEqual(attempts, [...expected, ...expected], 'the run after the crash')
      const scanner = new SecretScanner([secret])
      assert.equal(scanner.find(chunks), null, 'no event carries the secret')
      const result = recordsOf(await reopened.entries(), 'harness.tool.result')[0]!
      assert.match(String(result.result), /^charged with \[secret\]$/, 'the result keeps a marker instead of the secret')
      const raw = await context.dump()
      assert.equal(scanner.scanText(raw), null, 'the raw store holds the secret in no encoding')
      assert.ok(raw.includes('ch_1'), 'the dump does hold the session')
      await reopened.close()
    },
  }),
  defineCase({
    id: 'durable.cut-batch.rules',
    title: 'after a crash: a finished call keeps its result, a safe call runs again, other calls get a tool error',
    async run(context) {
      const runs: Record<string, number> = { lookup: 0, ship: 0, ping: 0, email: 0 }
      const packs: string[] = []
      const plain = (name: string) =>
        toolDefinition({ name, description: name, inputSchema: z.object({}) }).server(async () => {
          runs[name]!++
          return { [name]: 'done' }
        })
      const ship = durableTool(toolDefinition({ name: 'ship', description: 'ship', inputSchema: z.object({}) }), async (_a, { step }) => {
        runs.ship!++
        const box = await step.do('pack', ({ idempotencyKey }) => {
          packs.push(idempotencyKey)
          return { box: 'b1' }
        })
        const label = await step.do('label', () => ({ label: `L-${box.box}` }))
        return label
      })
      const email = durableTool(
        toolDefinition({ name: 'email', description: 'email', inputSchema: z.object({}) }),
        async () => {
          runs.email!++
          return 'sent'
        },
        { replay: 'never' },
      )
      const model = scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user'
          ? { toolCalls: ['lookup', 'ship', 'ping', 'email'].map((name) => ({ name, args: {} })) }
          : 'All handled.',
      )
      const harness = defineHarness({ name: 'batch', adapter: model, tools: [plain('lookup'), ship, plain('ping'), email] })
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend(isStep('label'), 'before')
      const session = await first.host.open({ sessionId: 'batch' })
      await runUntilCrash(first, session.send('do all'), 'batch')
      assert.deepEqual(runs, { lookup: 1, ship: 1, ping: 0, email: 0 })
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const reopened = await second.host.open({ sessionId: 'batch' })
      await drain(reopened.resume())
      assert.deepEqual(runs, { lookup: 1, ship: 2, ping: 0, email: 0 }, 'only the safe call ran again')
      assert.equal(packs.length, 1, 'the finished step did not run again')
      const entries = await reopened.entries()
      assertWellFormed(entries)
      const results = new Map(recordsOf(entries, 'harness.tool.result').map((r) => [r.toolName, r]))
      assert.deepEqual(results.get('lookup')?.result, { lookup: 'done' })
      assert.deepEqual(results.get('ship')?.result, { label: 'L-b1' })
      for (const name of ['ping', 'email']) {
        assert.deepEqual(results.get(name)?.result, { error: DEFAULT_CUT_TOOL_ERROR }, name)
        assert.equal(results.get(name)?.cut, true)
      }
      const lastRequest = model.requests.at(-1)!
      const toolMessages = lastRequest.filter((m) => m.role === 'tool')
      assert.equal(toolMessages.length, 4, 'the model saw one result per call of the batch')
      await reopened.close()
    },
  }),
  defineCase({
    id: 'durable.replay-never.steps-stay',
    title: "a cut 'never' call is not run again: the model gets a tool error, the first run's steps stay in the log",
    async run(context) {
      const sent: string[] = []
      const notify = durableTool(
        // A replay on the definition must be ignored: durableTool's option decides.
        Object.assign(toolDefinition({ name: 'notify', description: 'n', inputSchema: z.object({ to: z.string() }) }), { replay: 'safe' }),
        async ({ to }, { step, append }) => {
          const mail = await step.do(`send:${to}`, ({ idempotencyKey }) => {
            sent.push(idempotencyKey)
            return { id: 'm1' }
          })
          append([{ type: 'app.mail', id: mail.id }])
          return { mailId: mail.id }
        },
        { replay: 'never' },
      )
      const harness = defineHarness({
        name: 'mail',
        adapter: scriptedText(({ messages }) =>
          messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'notify', args: { to: 'a@b.c' } }] } : 'ok',
        ),
        tools: [notify],
      })
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend(isResult, 'before')
      const session = await first.host.open({ sessionId: 'mail' })
      await runUntilCrash(first, session.send('mail'), 'notify')
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const reopened = await second.host.open({ sessionId: 'mail' })
      await drain(reopened.resume())
      assert.equal(sent.length, 1, 'the tool did not run again (a replay on the definition is not read)')
      const entries = await reopened.entries()
      assert.equal(recordsOf(entries, 'harness.step').length, 1, "the first run's step stays")
      assert.equal(recordsOf(entries, 'app.mail').length, 0, "a cut call's records never happened")
      const result = recordsOf(entries, 'harness.tool.result')[0]!
      assert.equal(result.ok, false)
      assert.equal(result.cut, true)
      await reopened.close()
    },
  }),
  defineCase({
    id: 'durable.second-writer.conflict',
    title: 'a second writer makes the host stop with LOG_CONFLICT, and the log stays well-formed',
    async run(context) {
      const intruder = await context.openStore()
      let intruded = false
      const tool = durableTool(toolDefinition({ name: 'work', description: 'w', inputSchema: z.object({}) }), async (_a, { step }) => {
        await step.do('one', async () => {
          const tail = await readFrom(intruder, 'shared')
          await intruder.append('shared', tail.length + 1, [{ type: 'app.other-writer' }])
          intruded = true
          return 1
        })
        await step.do('two', () => 2)
        return 'done'
      })
      const harness = defineHarness({
        name: 'work',
        adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'work', args: {} }] } : 'ok')),
        tools: [tool],
      })
      const proc = await startCaseMachine(context, harness, 'host')
      const session = await proc.host.open({ sessionId: 'shared' })
      await expectCode(drain(session.send('go')), 'LOG_CONFLICT', 'the host that lost the race')
      assert.ok(intruded)
      await expectCode(drain(session.send('again')), 'LOG_CONFLICT', 'a stopped session refuses new turns')
      const entries = await readFrom(context.store, 'shared')
      assertWellFormed(entries)
      assert.equal(entries.at(-1)?.record.type, 'app.other-writer', 'nothing was written after the other writer')
      assert.equal(recordsOf(entries, 'harness.step').length, 0)
    },
  }),
  defineCase({
    id: 'durable.lease.one-host',
    title: 'one host drives a session: a second host cannot open it while the lease lives, and takes over after',
    requires: ['leases'],
    async run(context) {
      const billing = new FakeBilling()
      const harness = checkoutHarness(billing)
      const a = await startCaseMachine(context, harness, 'host-a')
      const b = await startCaseMachine(context, harness, 'host-b')
      const session = await a.host.open({ sessionId: 'leased' })
      await expectCode(b.host.open({ sessionId: 'leased' }), 'LEASE_HELD', 'second host')
      await session.close()
      const taken = await b.host.open({ sessionId: 'leased' })
      await drain(taken.send('checkout o9'))
      assert.equal(billing.charges.size, 1)
      await taken.close()
    },
  }),
]
