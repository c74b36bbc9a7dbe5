import { chat, type StreamChunk, toolDefinition } from '@tanstack/ai'
import {
  createWorker,
  defineHarness,
  type DurableToolContext,
  durableTool,
  type HarnessStore,
  HARNESS_EVENTS,
  type Harness,
} from '@tanstack/ai-harness'
import type { StepDoOptions, VerifyContext } from '@tanstack/ai-harness/log'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { scriptedText, startMachine } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  batchModel,
  createWorld,
  delegatingHarnesses,
  drain,
  recordsOf,
  runUntilCrash,
  TEST_LEASE_MS,
  type World,
} from '../support/harness.js'

/** A mailer with no idempotency key: every send is a new email. */
class Outbox {
  readonly sent: string[] = []
  send(to: string): { id: string } {
    this.sent.push(to)
    return { id: `mail_${this.sent.length}` }
  }
}

/** A harness whose tool `work` runs `body`; it returns `{ value }` or `{ code, message }` of what body threw. */
function oneTool(body: (context: DurableToolContext) => Promise<unknown>, name = 'outcomes'): Harness {
  const tool = durableTool(toolDefinition({ name: 'work', description: 'Does things', inputSchema: z.object({}) }), async (_a, ctx) => {
    try {
      return { value: await body(ctx) }
    } catch (error) {
      return { code: (error as { code?: string }).code ?? null, message: (error as Error).message }
    }
  })
  return defineHarness({ name, adapter: batchModel([{ name: 'work' }]), tools: [tool] })
}

const hasRecord = (type: string, name?: string) => (records: readonly LogRecord[]) =>
  records.some((r) => r.type === type && (name === undefined || r.name === name))

async function toolResult(world: World, sessionId = 's'): Promise<unknown> {
  return recordsOf(await world.read(sessionId), 'harness.tool.result').at(-1)?.result
}

/** Runs the session until the first machine crashes at `crashAt` (before or after the matching append), then resumes it on a second host. */
async function crashAndResume(
  world: World,
  harness: Harness,
  crashAt: { match: (records: readonly LogRecord[]) => boolean; point: 'before' | 'after' },
): Promise<StreamChunk[]> {
  const first = world.start(harness, 'host-1')
  first.store.crashOnAppend(crashAt.match, crashAt.point)
  const session = await first.host.open({ sessionId: 's' })
  await runUntilCrash(first, session.send('go'))
  world.expireLeases()
  const second = await world.start(harness, 'host-2').host.open({ sessionId: 's' })
  const chunks = await drain(second.resume())
  await second.close()
  return chunks
}

/** A store that counts its appends and the records in them. */
function counting(inner: HarnessStore): HarnessStore & { appends: number } {
  const counted = Object.create(inner) as HarnessStore & { appends: number }
  counted.appends = 0
  counted.append = (...args: Parameters<HarnessStore['append']>) => {
    counted.appends++
    return inner.append(...args)
  }
  return counted
}

describe('a step without verify, once or undo', () => {
  it('costs exactly one write, and a verify step one more (its intent)', async () => {
    const appendsWith = async (body: (ctx: DurableToolContext) => Promise<unknown>) => {
      const world = createWorld()
      const store = counting(memoryStore({ data: world.data, clock: world.clock }))
      const machine = startMachine(store, { harnesses: oneTool(body), clock: world.clock, hostId: 'host' })
      await drain((await machine.host.open({ sessionId: 's' })).send('go'))
      return store.appends
    }
    const none = await appendsWith(async () => 'x')
    const plain = await appendsWith(({ step }) => step.do('a', () => 1))
    const verified = await appendsWith(({ step }) => step.do('a', { verify: () => 'not-done' as const }, () => 1))
    const once = await appendsWith(({ step }) => step.do('a', { once: true }, () => 1))
    const undo = await appendsWith(({ step }) => step.do('a', { undo: () => {} }, () => 1))
    expect(plain - none).toBe(1)
    expect(verified - none).toBe(2)
    expect(once - none).toBe(2)
    // undo costs nothing until a rollback.
    expect(undo - none).toBe(1)
  })
})

describe('step.do with verify', () => {
  const mailer = (outbox: Outbox, verdicts: VerifyContext[], verify: (ctx: VerifyContext) => unknown) =>
    oneTool(({ step }) =>
      step.do(
        'send',
        {
          verify: (ctx) => {
            verdicts.push(ctx)
            return verify(ctx) as never
          },
        },
        () => outbox.send('ann@example.com'),
      ),
    )

  it('logs an intent before fn; a crash between sending and storing asks verify, whose { done } is stored without sending again', async () => {
    const world = createWorld()
    const outbox = new Outbox()
    const seen: VerifyContext[] = []
    const harness = mailer(outbox, seen, () => (outbox.sent.length > 0 ? { done: { id: 'mail_1' } } : 'not-done'))
    await crashAndResume(world, harness, { match: hasRecord('harness.step', 'send'), point: 'before' })
    expect(outbox.sent).toHaveLength(1)
    expect(seen).toHaveLength(1)
    const entries = await world.read('s')
    const [intent] = recordsOf(entries, 'harness.step.intent')
    const callId = String(intent!.toolCallId)
    expect(seen[0]).toMatchObject({ idempotencyKey: `s:${callId}:send`, attempt: 1, intent: { attempt: 1, at: intent!.at } })
    // verify's verdict is logged as a step of its own (a later run does not ask again), then the step's value.
    expect(recordsOf(entries, 'harness.step').map((r) => [r.name, r.value])).toEqual([
      ['verify(send)#1', { done: true, value: { id: 'mail_1' } }],
      ['send', { id: 'mail_1' }],
    ])
    expect(await toolResult(world)).toEqual({ value: { id: 'mail_1' } })
  })

  it("'not-done' runs fn; a crash right after the intent (before the send) sends once", async () => {
    const world = createWorld()
    const outbox = new Outbox()
    const seen: VerifyContext[] = []
    const harness = mailer(outbox, seen, () => (outbox.sent.length > 0 ? { done: { id: 'mail_1' } } : 'not-done'))
    await crashAndResume(world, harness, { match: hasRecord('harness.step.intent'), point: 'after' })
    expect(outbox.sent).toHaveLength(1)
    expect(seen).toHaveLength(1)
    expect(recordsOf(await world.read('s'), 'harness.step.intent')).toHaveLength(2)
    expect(await toolResult(world)).toEqual({ value: { id: 'mail_1' } })
  })

  it('a run without a crash never calls verify', async () => {
    const world = createWorld()
    const outbox = new Outbox()
    const seen: VerifyContext[] = []
    await drain(
      (
        await world
          .start(
            mailer(outbox, seen, () => 'unknown'),
            'h',
          )
          .host.open({ sessionId: 's' })
      ).send('go'),
    )
    expect(seen).toEqual([])
    expect(outbox.sent).toHaveLength(1)
  })

  it("'unknown' asks a person with the evidence; the answer decides: done, run again, or fail", async () => {
    for (const [answer, sends, result] of [
      [{ decision: 'done', value: { id: 'by-hand' } }, 1, { value: { id: 'by-hand' } }],
      [{ decision: 'run-again' }, 2, { value: { id: 'mail_2' } }],
      [{ decision: 'fail', reason: 'bounced' }, 1, { code: 'STEP_FAILED', message: expect.stringContaining('bounced') }],
    ] as const) {
      const world = createWorld()
      const outbox = new Outbox()
      const seen: VerifyContext[] = []
      const harness = mailer(outbox, seen, () => 'unknown')
      const chunks = await crashAndResume(world, harness, { match: hasRecord('harness.step', 'send'), point: 'before' })
      const question = chunks.find((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === HARNESS_EVENTS.question) as unknown as {
        value: { questionId: string; message: string }
      }
      expect(question.value.message).toContain('idempotency key s:')
      expect(question.value.message).toContain('verify said "unknown"')
      expect(question.value.message).toContain(new Date(world.clock.now() - TEST_LEASE_MS - 1).toISOString().slice(0, 10))
      expect(outbox.sent).toHaveLength(1)
      const host = world.start(harness, 'host-3').host
      await host.answer({ sessionId: 's', questionId: question.value.questionId, answer })
      const worker = createWorker({
        store: memoryStore({ data: world.data, clock: world.clock }),
        harnesses: harness,
        clock: world.clock,
        leaseMs: TEST_LEASE_MS,
      })
      world.expireLeases()
      expect((await worker.poll()).resumed).toEqual(['s'])
      expect(seen).toHaveLength(1)
      expect(outbox.sent).toHaveLength(sends)
      expect(await toolResult(world)).toEqual(result)
    }
  })

  it("verify that throws is retried by the step policy, each failure logged as its step's; its last failure fails the step without running fn", async () => {
    const world = createWorld()
    const outbox = new Outbox()
    let calls = 0
    const harness = oneTool(({ step }) =>
      step.do(
        'send',
        {
          attempts: 2,
          delayMs: 0,
          verify: () => {
            calls++
            throw new Error(`outbox down ${calls}`)
          },
        },
        () => outbox.send('ann@example.com'),
      ),
    )
    await crashAndResume(world, harness, { match: hasRecord('harness.step', 'send'), point: 'before' })
    expect(calls).toBe(2)
    expect(recordsOf(await world.read('s'), 'harness.step.failed').map((r) => [r.name, r.attempt, r.final])).toEqual([
      ['verify(send)#1', 1, false],
      ['verify(send)#1', 2, true],
    ])
    expect(outbox.sent).toHaveLength(1)
    expect(await toolResult(world)).toEqual({
      code: 'STEP_FAILED',
      message: 'Step "send" failed after 2 attempts; the last threw: verify threw: outbox down 2',
    })
  })
})

describe("verify's retry waits", () => {
  const MINUTE = 60_000

  it("park the session as a step's do: the failure is logged with its due time, and a worker asks verify again then (injected clock)", async () => {
    const world = createWorld()
    const outbox = new Outbox()
    const asked: number[] = []
    const tool = durableTool(toolDefinition({ name: 'work', description: 'Mails', inputSchema: z.object({}) }), async (_a, { step }) => ({
      value: await step.do(
        'send',
        {
          attempts: 3,
          delayMs: MINUTE,
          verify: () => {
            asked.push(world.clock.now())
            if (asked.length === 1) throw new Error('outbox down')
            return outbox.sent.length > 0 ? { done: { id: 'mail_1' } } : 'not-done'
          },
        },
        () => outbox.send('ann@example.com'),
      ),
    }))
    const harness = defineHarness({ name: 'outcomes', adapter: batchModel([{ name: 'work' }]), tools: [tool], parkAfterMs: 1_000 })
    await crashAndResume(world, harness, { match: hasRecord('harness.step', 'send'), point: 'before' })
    // The second host asked once; the wait for the next ask is in the log, and the session parked on it.
    expect(asked).toHaveLength(1)
    const entries = await world.read('s')
    const dueAt = asked[0]! + MINUTE
    expect(recordsOf(entries, 'harness.step.failed')).toMatchObject([
      { name: 'verify(send)#1', attempt: 1, error: 'outbox down', final: false, retryAt: dueAt },
    ])
    expect(recordsOf(entries, 'harness.parked')).toMatchObject([{ reason: 'sleep', until: dueAt }])
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: harness,
      clock: world.clock,
      leaseMs: TEST_LEASE_MS,
    })
    world.clock.advance(dueAt - world.clock.now() - 1)
    expect((await worker.poll()).resumed).toEqual([])
    world.clock.advance(1)
    expect((await worker.poll()).resumed).toEqual(['s'])
    expect(asked).toEqual([dueAt - MINUTE, dueAt])
    expect(outbox.sent).toHaveLength(1)
    expect(await toolResult(world)).toEqual({ value: { id: 'mail_1' } })
    await worker.stop()
  })
})

describe('step.do with once: true', () => {
  it('never runs fn again after its intent: the run after a crash throws STEP_OUTCOME_UNKNOWN, which the tool catches', async () => {
    for (const point of ['after-intent', 'after-send'] as const) {
      const world = createWorld()
      const outbox = new Outbox()
      const harness = oneTool(({ step }) => step.do('send', { once: true }, () => outbox.send('ann@example.com')))
      await crashAndResume(
        world,
        harness,
        point === 'after-intent'
          ? { match: hasRecord('harness.step.intent'), point: 'after' }
          : { match: hasRecord('harness.step', 'send'), point: 'before' },
      )
      expect(outbox.sent).toHaveLength(point === 'after-intent' ? 0 : 1)
      expect(await toolResult(world)).toEqual({ code: 'STEP_OUTCOME_UNKNOWN', message: expect.stringContaining('idempotency key s:') })
    }
  })

  it('refuses once with verify, and once with attempts > 1', async () => {
    const world = createWorld()
    const codes: unknown[] = []
    const harness = oneTool(async ({ step }) => {
      for (const options of [{ once: true, verify: () => 'not-done' as const }, { once: true, attempts: 3 }, { once: 'yes' }]) {
        try {
          await step.do('x', options as StepDoOptions, () => 1)
        } catch (error) {
          codes.push((error as { code?: string }).code)
        }
      }
    })
    await drain((await world.start(harness, 'h').host.open({ sessionId: 's' })).send('go'))
    expect(codes).toEqual(['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT'])
  })
})

describe('step.do with undo', () => {
  /** charge (undo: refund), reserve (undo: release), then an invoice that fails. */
  function shop(log: string[], failInvoice = true) {
    return oneTool(async ({ step }) => {
      const charge = await step.do('charge', { undo: (c, { idempotencyKey }) => void log.push(`refund ${c.id} ${idempotencyKey}`) }, () => {
        log.push('charge')
        return { id: 'ch_1' }
      })
      await step.do('reserve', { undo: () => void log.push('release') }, () => void log.push('reserve'))
      await step.do('invoice', () => {
        log.push('invoice')
        if (failInvoice) throw new Error('invoice service down')
      })
      return charge
    })
  }

  it('a call that fails runs the compensations of its finished steps, newest first; the model reads what was undone', async () => {
    const world = createWorld()
    const log: string[] = []
    const tool = durableTool(toolDefinition({ name: 'work', description: 'd', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('charge', { undo: () => void log.push('refund') }, () => 'ch_1')
      await step.do('invoice', () => {
        throw new Error('invoice service down')
      })
    })
    const adapter = batchModel([{ name: 'work' }])
    const harness = defineHarness({ name: 'shop', adapter, tools: [tool] })
    await drain((await world.start(harness, 'h').host.open({ sessionId: 's' })).send('go'))
    expect(log).toEqual(['refund'])
    const [result] = recordsOf(await world.read('s'), 'harness.tool.result')
    expect(result).toMatchObject({ ok: false })
    expect((result!.result as { error: string }).error).toBe('invoice service down. The call was rolled back: "charge" undone.')
    expect(recordsOf(await world.read('s'), 'harness.rollback')).toHaveLength(1)
    expect(recordsOf(await world.read('s'), 'harness.step').map((r) => r.name)).toEqual(['charge', 'undo(charge)'])
  })

  it('a call that succeeds, or whose tool catches the failure, undoes nothing', async () => {
    const world = createWorld()
    const log: string[] = []
    await drain((await world.start(shop(log, false), 'h').host.open({ sessionId: 's' })).send('go'))
    expect(log).toEqual(['charge', 'reserve', 'invoice'])
    // `shop` returns the error as a value (oneTool catches): no final failure, no rollback.
    const caught: string[] = []
    const other = createWorld()
    await drain((await other.start(shop(caught), 'h').host.open({ sessionId: 's' })).send('go'))
    expect(caught).toEqual(['charge', 'reserve', 'invoice'])
    expect(recordsOf(await other.read('s'), 'harness.rollback')).toEqual([])
  })

  it('a crash mid-rollback goes on where it stopped: no compensation runs twice, the failed step does not run again', async () => {
    const world = createWorld()
    const log: string[] = []
    const tool = durableTool(toolDefinition({ name: 'work', description: 'd', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('charge', { undo: () => void log.push('refund') }, () => void log.push('charge'))
      await step.do('reserve', { undo: () => void log.push('release') }, () => void log.push('reserve'))
      await step.do('invoice', () => {
        log.push('invoice')
        throw new Error('invoice service down')
      })
    })
    const harness = defineHarness({ name: 'shop', adapter: batchModel([{ name: 'work' }]), tools: [tool] })
    await crashAndResume(world, harness, { match: hasRecord('harness.step', 'undo(reserve)'), point: 'after' })
    expect(log).toEqual(['charge', 'reserve', 'invoice', 'release', 'refund'])
    const error = (recordsOf(await world.read('s'), 'harness.tool.result')[0]!.result as { error: string }).error
    expect(error).toBe('invoice service down. The call was rolled back: "reserve" undone; "charge" undone.')
  })

  it('a compensation cut by a crash does not run again: the error says it may not be undone', async () => {
    const world = createWorld()
    const log: string[] = []
    const tool = durableTool(toolDefinition({ name: 'work', description: 'd', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('charge', { undo: () => void log.push('refund') }, () => void log.push('charge'))
      throw new Error('out of stock')
    })
    const harness = defineHarness({ name: 'shop', adapter: batchModel([{ name: 'work' }]), tools: [tool] })
    await crashAndResume(world, harness, { match: hasRecord('harness.step', 'undo(charge)'), point: 'before' })
    expect(log).toEqual(['charge', 'refund'])
    const error = (recordsOf(await world.read('s'), 'harness.tool.result')[0]!.result as { error: string }).error
    expect(error).toContain('"charge" may not be undone')
  })
})

describe('verify, once and undo in plain chat()', () => {
  async function plainRun(execute: (ctx: DurableToolContext) => Promise<unknown>): Promise<string> {
    const tool = durableTool(toolDefinition({ name: 'work', description: 'd', inputSchema: z.object({}) }), (_a, ctx) => execute(ctx))
    const adapter = scriptedText([{ toolCalls: [{ id: 'c1', name: 'work', args: {} }] }, 'Done.'])
    await drain(chat({ adapter, messages: [{ role: 'user', content: 'go' }], tools: [tool] }))
    return String(adapter.requests.at(-1)?.find((m) => m.role === 'tool')?.content)
  }

  it('verify is never called and once runs fn once; undo runs when the call fails', async () => {
    const log: string[] = []
    const seen = await plainRun(async ({ step }) => {
      await step.do('send', { verify: () => void log.push('verify') as never }, () => void log.push('send'))
      await step.do('sms', { once: true }, () => void log.push('sms'))
      await step.do('charge', { undo: (v, { idempotencyKey }) => void log.push(`refund ${v} ${idempotencyKey}`) }, () => 'ch_1')
      throw new Error('invoice service down')
    })
    expect(log).toEqual(['send', 'sms', 'refund ch_1 plain:c1:undo(charge)'])
    expect(seen).toContain('invoice service down. The call was rolled back: \\"charge\\" undone.')
  })
})

describe('undo when the session or its parent agent is cancelled', () => {
  /** charge (undo: refund), then a question the cancel cuts short. */
  function confirmTool(log: string[]) {
    return durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('charge', { undo: () => void log.push('refund') }, () => void log.push('charge'))
      await step.do('plain', () => void log.push('plain'))
      await step.ask({ name: 'ship', message: 'Ship it?', schema: z.object({ ok: z.boolean() }) })
      await step.do('ship', () => void log.push('ship'))
      return 'shipped'
    })
  }

  it('a cancel while the call waits runs the compensations of its finished steps, once, and settles the call with what was undone', async () => {
    const world = createWorld()
    const log: string[] = []
    const harness = defineHarness({ name: 'shop', adapter: batchModel([{ name: 'confirm' }]), tools: [confirmTool(log)] })
    const session = await world.start(harness, 'h').host.open({ sessionId: 's' })
    await drain(session.send('go'))
    expect(session.status).toBe('parked')
    await session.cancel('the customer changed their mind')
    expect(log).toEqual(['charge', 'plain', 'refund'])
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.tool.result')).toMatchObject([
      {
        ok: false,
        result: { error: 'The session was cancelled: the customer changed their mind. The call was rolled back: "charge" undone.' },
      },
    ])
    expect(recordsOf(entries, 'harness.turn.cancelled')).toHaveLength(1)
    // Cancelling again changes nothing and undoes nothing twice.
    const again = await world.start(harness, 'h2').host.open({ sessionId: 's' })
    await again.cancel()
    expect(log).toEqual(['charge', 'plain', 'refund'])
  })

  it('a cancel of a call whose failure was rolling back when a crash cut it: a crash in the cancel too leaves the turn to end cancelled, each undo once', async () => {
    const world = createWorld()
    const log: string[] = []
    const tool = durableTool(toolDefinition({ name: 'order', description: 'o', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('charge', { undo: () => void log.push('refund') }, () => void log.push('charge'))
      await step.do('invoice', () => {
        throw new Error('The invoice service is down')
      })
    })
    const harness = defineHarness({ name: 'shop', adapter: batchModel([{ name: 'order' }]), tools: [tool] })
    // Host 1 fails the call and dies once its rollback is logged, before the refund.
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend(hasRecord('harness.rollback'), 'after')
    await runUntilCrash(first, (await first.host.open({ sessionId: 's' })).send('go'))
    // Host 2 cancels the cut turn instead of resuming it, and dies once the cancel is logged too.
    world.expireLeases()
    const second = world.start(harness, 'host-2')
    second.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.rollback' && r.cancel !== null), 'after')
    const cancelling = await second.host.open({ sessionId: 's' })
    // The cancel as a stream of no chunks, so runUntilCrash waits for the crash in it.
    const cancel: AsyncIterable<StreamChunk> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          await cancelling.cancel('the customer changed their mind')
          return { done: true, value: undefined }
        },
      }),
    }
    await runUntilCrash(second, cancel)
    // Host 3 takes the turn over: it finishes the cancel's rollback and ends the turn cancelled.
    world.expireLeases()
    const third = await world.start(harness, 'host-3').host.open({ sessionId: 's' })
    await drain(third.resume())
    const entries = await world.read('s')
    expect(log).toEqual(['charge', 'refund'])
    expect(recordsOf(entries, 'harness.rollback').map((r) => r.cancel)).toEqual([
      null,
      { turnId: expect.any(String), reason: 'the customer changed their mind' },
    ])
    expect(recordsOf(entries, 'harness.tool.result')).toMatchObject([
      { ok: false, result: { error: 'The invoice service is down. The call was rolled back: "charge" undone.' } },
    ])
    expect(recordsOf(entries, 'harness.turn.cancelled')).toMatchObject([{ reason: 'the customer changed their mind' }])
    expect(recordsOf(entries, 'harness.assistant')).toHaveLength(1)
  })

  it('a call without compensations is cancelled as before: nothing is written for it', async () => {
    const world = createWorld()
    const tool = durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('plain', () => 1)
      return step.ask({ name: 'ship', message: 'Ship it?', schema: z.object({ ok: z.boolean() }) })
    })
    const harness = defineHarness({ name: 'shop', adapter: batchModel([{ name: 'confirm' }]), tools: [tool] })
    const session = await world.start(harness, 'h').host.open({ sessionId: 's' })
    await drain(session.send('go'))
    await session.cancel()
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.tool.result')).toEqual([])
    expect(recordsOf(entries, 'harness.rollback')).toEqual([])
  })

  it("cancelling the parent agent's session rolls back the finished steps of its child's call", async () => {
    const world = createWorld()
    const log: string[] = []
    const { parent, child } = delegatingHarnesses(confirmTool(log))
    const session = await world.start([parent, child], 'h').host.open({ sessionId: 'boss', harness: 'boss' })
    await drain(session.send('go'))
    await session.cancel()
    expect(log).toEqual(['charge', 'plain', 'refund'])
  })
})
