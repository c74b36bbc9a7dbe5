import { chat, toolDefinition } from '@tanstack/ai'
import {
  createWorker,
  defineHarness,
  durableTool,
  HARNESS_EVENTS,
  type Harness,
  NonRetryableError,
  type StepOptions,
  type StepRunContext,
} from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, codeOf, createWorld, drain, TEST_LEASE_MS, recordsOf, runUntilCrash, type World } from '../support/harness.js'

const MINUTE = 60_000

/** What a step's fn saw on each attempt. */
interface Seen {
  attempt: number
  key: string
  signal: AbortSignal
}

/**
 * A harness with one tool `work` whose only step runs `fn`; the tool returns the step's
 * value, or, when the step throws, `{ code, message }` of what it threw (so the test sees
 * exactly what the tool saw).
 */
function oneStep(
  fn: (context: StepRunContext) => unknown,
  options: {
    step?: StepOptions
    tool?: { retry?: StepOptions; timeoutMs?: number }
    harness?: { retry?: StepOptions; parkAfterMs?: number }
  } = {},
): Harness {
  const tool = durableTool(
    toolDefinition({ name: 'work', description: 'Does a flaky thing', inputSchema: z.object({}) }),
    async (_a, { step }) => {
      try {
        const value = options.step ? await step.do('flaky', options.step, fn as never) : await step.do('flaky', fn as never)
        return { value }
      } catch (error) {
        return { code: (error as { code?: string }).code, message: (error as Error).message }
      }
    },
    options.tool ?? {},
  )
  return defineHarness({ name: 'retries', adapter: batchModel([{ name: 'work' }]), tools: [tool], ...options.harness })
}

/** fn that fails `failures` times (recording each attempt), then returns 'ok'. */
function failing(failures: number, seen: Seen[], error: (attempt: number) => unknown = (n) => new Error(`boom ${n}`)) {
  return ({ attempt, idempotencyKey, signal }: StepRunContext) => {
    seen.push({ attempt, key: idempotencyKey, signal })
    if (attempt <= failures) throw error(attempt)
    return 'ok'
  }
}

async function toolResult(world: World, sessionId: string): Promise<unknown> {
  return recordsOf(await world.read(sessionId), 'harness.tool.result').at(-1)?.result
}

const failuresIn = async (world: World, sessionId: string) => recordsOf(await world.read(sessionId), 'harness.step.failed')

describe('step.do retries in a session', () => {
  it('retries a failing fn up to its attempts, with the same idempotency key and the attempt number, logging each failure', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(2, seen), { step: { attempts: 3, delayMs: 1 } })
    const session = await world.start(harness, 'host').host.open({ sessionId: 's' })
    await drain(session.send('go'))
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3])
    const [call] = recordsOf(await world.read('s'), 'harness.tool.result')
    expect(new Set(seen.map((s) => s.key))).toEqual(new Set([`s:${call!.toolCallId}:flaky`]))
    const failures = await failuresIn(world, 's')
    expect(failures.map((f) => [f.attempt, f.final, f.error, f.timedOut])).toEqual([
      [1, false, 'boom 1', false],
      [2, false, 'boom 2', false],
    ])
    for (const f of failures) expect(f.retryAt).toBe(Math.ceil(Number(f.at) + (f.attempt === 1 ? 1 : 2)))
    expect(recordsOf(await world.read('s'), 'harness.step').map((r) => r.value)).toEqual(['ok'])
    expect(await toolResult(world, 's')).toEqual({ value: 'ok' })
  })

  it('after the last attempt the tool sees what fn threw; the last failure is logged as final', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(99, seen), { step: { attempts: 2, delayMs: 0 } })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    expect(seen.map((s) => s.attempt)).toEqual([1, 2])
    const failures = await failuresIn(world, 's')
    expect(failures.map((f) => [f.attempt, f.final, 'retryAt' in f])).toEqual([
      [1, false, true],
      [2, true, false],
    ])
    expect(await toolResult(world, 's')).toEqual({ message: 'boom 2' })
  })

  it('the seed form without options runs fn once and records nothing when it throws; the tool sees what fn threw', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(99, seen, () => new TypeError('bad input')))
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    expect(seen).toHaveLength(1)
    expect(await failuresIn(world, 's')).toEqual([])
    expect(recordsOf(await world.read('s'), 'harness.step')).toEqual([])
    expect(await toolResult(world, 's')).toEqual({ message: 'bad input' })
  })

  it('a NonRetryableError ends the step at once, whatever attempts are left', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(
      failing(99, seen, () => new NonRetryableError('card declined')),
      { step: { attempts: 5, delayMs: 0 } },
    )
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    expect(seen).toHaveLength(1)
    expect((await failuresIn(world, 's')).map((f) => [f.attempt, f.final])).toEqual([[1, true]])
    expect(await toolResult(world, 's')).toEqual({ message: 'card declined' })
  })

  it('isFinal decides which errors are final; it gets the error and the attempt', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const asked: Array<[unknown, number]> = []
    const status = (attempt: number) =>
      Object.assign(new Error(`status ${attempt === 1 ? 503 : 400}`), { status: attempt === 1 ? 503 : 400 })
    const harness = oneStep(failing(99, seen, status), {
      step: {
        attempts: 5,
        delayMs: 0,
        isFinal: (error, attempt) => {
          asked.push([(error as { status?: number }).status, attempt])
          return (error as { status?: number }).status === 400
        },
      },
    })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    expect(seen.map((s) => s.attempt)).toEqual([1, 2])
    expect(asked).toEqual([
      [503, 1],
      [400, 2],
    ])
    expect((await failuresIn(world, 's')).map((f) => f.final)).toEqual([false, true])
  })

  it('waits delayMs × backoff^n between attempts, at most maxDelayMs (logged as retryAt)', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    // The clock does not move in this test: each retryAt is the logged time plus the delay.
    const harness = oneStep(failing(3, seen), { step: { attempts: 4, delayMs: 2, backoff: 3, maxDelayMs: 10 } })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    const failures = await failuresIn(world, 's')
    expect(failures.map((f) => Number(f.retryAt) - Number(f.at))).toEqual([2, 6, 10])
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3, 4])
  })

  it('a failure message keeps no secret of the session: not in the log, not in the error the tool sees', async () => {
    const world = createWorld()
    const secret = 'sk_live_abcdef123456'
    const harness = oneStep(
      () => {
        throw new Error(`upstream refused key ${secret}`)
      },
      { step: { attempts: 2, delayMs: 0 } },
    )
    const session = await world.start(harness, 'host').host.open({ sessionId: 's', secrets: { stripe: secret } })
    await drain(session.send('go'))
    const raw = JSON.stringify(await world.read('s'))
    expect(raw).not.toContain(secret)
    expect((await failuresIn(world, 's')).map((f) => f.error)).toEqual(['upstream refused key [secret]', 'upstream refused key [secret]'])
    expect(await toolResult(world, 's')).toMatchObject({ message: expect.stringContaining('upstream refused key [secret]') })
  })

  it("a retry's wait in the process ends when the run stops (cancel): fn is not called again", async () => {
    const world = createWorld()
    const seen: Seen[] = []
    let failed: () => void = () => {}
    const firstFailure = new Promise<void>((resolve) => {
      failed = resolve
    })
    const harness = oneStep(
      (context) => {
        seen.push({ attempt: context.attempt, key: context.idempotencyKey, signal: context.signal })
        failed()
        throw new Error('flaky')
      },
      // A minute in the process (parkAfterMs is larger): without the signal the test would time out.
      { step: { attempts: 3, delayMs: MINUTE }, harness: { parkAfterMs: 10 * MINUTE } },
    )
    const session = await world.start(harness, 'host').host.open({ sessionId: 's' })
    const running = drain(session.send('go')).catch(() => [])
    await firstFailure
    // The failure is logged before the wait begins.
    while ((await failuresIn(world, 's')).length === 0) await new Promise((resolve) => setTimeout(resolve, 1))
    await session.cancel('stop')
    await running
    expect(seen).toHaveLength(1)
    expect((await failuresIn(world, 's')).map((f) => f.attempt)).toEqual([1])
  })

  it('an attempt the session stops (cancel) is neither logged as a failure nor retried', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    let entered: () => void = () => {}
    const inside = new Promise<void>((resolve) => {
      entered = resolve
    })
    const harness = oneStep(
      ({ attempt, idempotencyKey, signal }) => {
        seen.push({ attempt, key: idempotencyKey, signal })
        entered()
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))
      },
      { step: { attempts: 3, delayMs: 0 } },
    )
    const session = await world.start(harness, 'host').host.open({ sessionId: 's' })
    const running = drain(session.send('go')).catch(() => [])
    await inside
    await session.cancel('stop')
    await running
    expect(seen).toHaveLength(1)
    expect(await failuresIn(world, 's')).toEqual([])
  })
})

describe('step.do retries across a crash', () => {
  it('the attempts go on from the log after a crash: attempt numbers continue, the key stays', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(2, seen), { step: { attempts: 4, delayMs: 0 } })
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step.failed' && r.attempt === 1), 'after')
    await runUntilCrash(first, (await first.host.open({ sessionId: 's' })).send('go'))
    world.expireLeases()
    await drain((await world.start(harness, 'host-2').host.open({ sessionId: 's' })).resume())
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3])
    expect(new Set(seen.map((s) => s.key)).size).toBe(1)
    expect((await failuresIn(world, 's')).map((f) => f.attempt)).toEqual([1, 2])
    expect(await toolResult(world, 's')).toEqual({ value: 'ok' })
  })

  it('a step that failed for good stays failed: after a crash the same error, without calling fn', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(99, seen), { step: { attempts: 2, delayMs: 0 } })
    const first = world.start(harness, 'host-1')
    // Crash after the final failure landed, before the tool's result.
    first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step.failed' && r.final === true), 'after')
    await runUntilCrash(first, (await first.host.open({ sessionId: 's' })).send('go'))
    expect(seen).toHaveLength(2)
    world.expireLeases()
    await drain((await world.start(harness, 'host-2').host.open({ sessionId: 's' })).resume())
    expect(seen).toHaveLength(2)
    expect(await failuresIn(world, 's')).toHaveLength(2)
    expect(await toolResult(world, 's')).toEqual({
      code: 'STEP_FAILED',
      message: 'Step "flaky" failed after 2 attempts; the last threw: boom 2',
    })
  })

  it('a retry whose delay is over parkAfterMs parks the session until its due time; a worker resumes it then (injected clock)', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(2, seen), {
      step: { attempts: 3, delayMs: MINUTE, backoff: 2 },
      harness: { parkAfterMs: 1_000 },
    })
    const session = await world.start(harness, 'host').host.open({ sessionId: 's' })
    const start = world.clock.now()
    const chunks = await drain(session.send('go'))
    const parked = chunks
      .filter((c) => (c as { name?: string }).name === HARNESS_EVENTS.parked)
      .map((c) => (c as { value?: unknown }).value)
    expect(parked).toEqual([{ reason: 'sleep', until: start + MINUTE, toolCallId: session.parked?.toolCallId }])
    expect(session.status).toBe('parked')
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: harness,
      clock: world.clock,
      leaseMs: TEST_LEASE_MS,
    })
    world.clock.advance(MINUTE - 1)
    expect((await worker.poll()).resumed).toEqual([])
    expect(seen).toHaveLength(1)
    world.clock.advance(1)
    expect((await worker.poll()).resumed).toEqual(['s'])
    // The second attempt failed too: parked again, twice the delay.
    expect(seen.map((s) => s.attempt)).toEqual([1, 2])
    world.clock.advance(2 * MINUTE - 1)
    expect((await worker.poll()).resumed).toEqual([])
    world.clock.advance(1)
    expect((await worker.poll()).resumed).toEqual(['s'])
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3])
    const failures = await failuresIn(world, 's')
    expect(failures.map((f) => Number(f.retryAt) - start)).toEqual([MINUTE, 3 * MINUTE])
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
    expect(await toolResult(world, 's')).toEqual({ value: 'ok' })
    await worker.stop()
  })

  it('a crash after a failure and before the park: the next host parks until the same logged due time, and the attempt count goes on', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(1, seen), { step: { attempts: 3, delayMs: 10 * MINUTE }, harness: { parkAfterMs: 1_000 } })
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.parked'), 'before')
    const start = world.clock.now()
    await runUntilCrash(first, (await first.host.open({ sessionId: 's' })).send('go'))
    world.expireLeases()
    const second = await world.start(harness, 'host-2').host.open({ sessionId: 's' })
    await drain(second.resume())
    expect(second.parked).toMatchObject({ reason: 'sleep', until: start + 10 * MINUTE })
    expect(await failuresIn(world, 's')).toHaveLength(1)
    expect(seen).toHaveLength(1)
    world.clock.advance(10 * MINUTE)
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: harness,
      clock: world.clock,
      leaseMs: TEST_LEASE_MS,
    })
    expect((await worker.poll()).resumed).toEqual(['s'])
    expect(seen.map((s) => s.attempt)).toEqual([1, 2])
    expect(await toolResult(world, 's')).toEqual({ value: 'ok' })
    await worker.stop()
  })
})

describe('time limits', () => {
  it("a step's timeoutMs aborts fn's signal with a TimeoutError and counts as a failed attempt; the next attempt runs", async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(
      ({ attempt, idempotencyKey, signal }) => {
        seen.push({ attempt, key: idempotencyKey, signal })
        // The first attempt never ends on its own (and ignores its signal).
        return attempt === 1 ? new Promise(() => {}) : 'ok'
      },
      { step: { attempts: 2, delayMs: 0, timeoutMs: 20 } },
    )
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    expect(seen.map((s) => s.attempt)).toEqual([1, 2])
    expect(seen[0]!.signal.aborted).toBe(true)
    expect((seen[0]!.signal.reason as Error).name).toBe('TimeoutError')
    expect(seen[1]!.signal.aborted).toBe(false)
    const [failure] = await failuresIn(world, 's')
    expect(failure).toMatchObject({ attempt: 1, timedOut: true, final: false })
    expect(String(failure!.error)).toMatch(/^TimeoutError: The attempt timed out after 20 ms/)
    expect(await toolResult(world, 's')).toEqual({ value: 'ok' })
  })

  it('a step whose every attempt times out fails with STEP_FAILED saying it timed out; a late value is not logged', async () => {
    const world = createWorld()
    let finishLate: (value: string) => void = () => {}
    const harness = oneStep(
      () =>
        new Promise((resolve) => {
          finishLate = resolve
        }),
      { step: { timeoutMs: 10 } },
    )
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    finishLate('too late')
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await toolResult(world, 's')).toMatchObject({ code: 'STEP_FAILED', message: expect.stringContaining('the last timed out') })
    expect(recordsOf(await world.read('s'), 'harness.step')).toEqual([])
  })

  it("a tool's timeoutMs aborts its steps and settles the call as a tool error; the dangling execute writes nothing more", async () => {
    const world = createWorld()
    const signals: AbortSignal[] = []
    const late: Array<Promise<string>> = []
    const tool = durableTool(
      toolDefinition({ name: 'slow', description: 'Takes too long', inputSchema: z.object({}) }),
      async (_a, { step }) => {
        const codeOfStep = (run: Promise<unknown>) =>
          run.then(
            () => 'ran',
            (error: { code?: string }) => String(error.code),
          )
        // Its fn ends when the deadline aborts its signal: the call has ended by then, so its value is not logged.
        const first = codeOfStep(
          step.do('wait', ({ signal }) => {
            signals.push(signal)
            return new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('late'), { once: true }))
          }),
        )
        late.push(first)
        await first
        // A step started after the deadline: refused, nothing runs or is written.
        const next = codeOfStep(step.do('after', () => 'never logged'))
        late.push(next)
        await next
        return 'done'
      },
      { timeoutMs: 30, retry: { attempts: 3, delayMs: 0 } },
    )
    const harness = defineHarness({ name: 'slow', adapter: batchModel([{ name: 'slow' }]), tools: [tool] })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    expect(signals).toHaveLength(1)
    expect(signals[0]!.aborted).toBe(true)
    const [result] = recordsOf(await world.read('s'), 'harness.tool.result')
    expect(result).toMatchObject({ ok: false, result: { error: expect.stringContaining('timed out after 30 ms') } })
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(await Promise.all(late)).toEqual(['TOOL_CALL_SETTLED', 'TOOL_CALL_SETTLED'])
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.step')).toEqual([])
    expect(recordsOf(entries, 'harness.step.failed')).toEqual([])
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  })
})

describe('step options and their defaults', () => {
  it('a step takes the harness retry, then the tool retry, then its own options, key by key', async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(99, seen), {
      harness: { retry: { attempts: 5, delayMs: 7, backoff: 1 } },
      tool: { retry: { attempts: 4, delayMs: 3 } },
      step: { attempts: 3 },
    })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    // attempts from the step, delayMs from the tool, backoff from the harness.
    expect(seen).toHaveLength(3)
    expect((await failuresIn(world, 's')).filter((f) => !f.final).map((f) => Number(f.retryAt) - Number(f.at))).toEqual([3, 3])
  })

  it("the harness's retry applies to the seed's two-argument form", async () => {
    const world = createWorld()
    const seen: Seen[] = []
    const harness = oneStep(failing(1, seen), { harness: { retry: { attempts: 2, delayMs: 0 } } })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    expect(seen.map((s) => s.attempt)).toEqual([1, 2])
    expect(await toolResult(world, 's')).toEqual({ value: 'ok' })
  })

  it('wrong step options are refused with INVALID_ARGUMENT before fn runs or anything is written', async () => {
    const world = createWorld()
    const outcomes: unknown[] = []
    let ran = 0
    const fn = () => {
      ran++
      return 'x'
    }
    const tool = durableTool(toolDefinition({ name: 'bad', description: 'b', inputSchema: z.object({}) }), async (_a, { step }) => {
      for (const [i, options] of [
        { attempts: 0 },
        { attempts: 1.5 },
        { delayMs: -1 },
        { backoff: 0.5 },
        { maxDelayMs: Number.NaN },
        { timeoutMs: 0 },
        { timeoutMs: 2 ** 31 },
        { isFinal: true },
        { retries: 3 },
        'often',
      ].entries()) {
        outcomes.push(await codeOf(() => step.do(`s${i}`, options as never, fn)))
      }
      outcomes.push(await codeOf(() => step.do('no fn', { attempts: 2 } as never)))
      outcomes.push(await codeOf(() => (step.do as (...args: unknown[]) => Promise<unknown>)('options last', fn, { attempts: 2 })))
      return 'checked'
    })
    const harness = defineHarness({ name: 'bad', adapter: batchModel([{ name: 'bad' }]), tools: [tool] })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 's' })).send('go'))
    expect(outcomes).toEqual(Array(12).fill('INVALID_ARGUMENT'))
    expect(ran).toBe(0)
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.step')).toEqual([])
    expect(recordsOf(entries, 'harness.step.failed')).toEqual([])
  })

  it('defineHarness and durableTool check their retry and timeoutMs options', async () => {
    const adapter = batchModel([])
    const def = toolDefinition({ name: 't', description: 't', inputSchema: z.object({}) })
    expect(await codeOf(() => defineHarness({ name: 'h', adapter, retry: { attempts: 0 } }))).toBe('INVALID_ARGUMENT')
    expect(await codeOf(() => defineHarness({ name: 'h', adapter, retry: { tries: 2 } as never }))).toBe('INVALID_ARGUMENT')
    expect(await codeOf(() => defineHarness({ name: 'h', adapter, retry: 3 as never }))).toBe('INVALID_ARGUMENT')
    expect(await codeOf(() => defineHarness({ name: 'h', adapter, retry: { attempts: 3, timeoutMs: 1000 } }))).toBe('none')
    expect(await codeOf(() => durableTool(def, async () => 'x', { retry: { backoff: 0 } }))).toBe('INVALID_ARGUMENT')
    expect(await codeOf(() => durableTool(def, async () => 'x', { timeoutMs: 0 }))).toBe('INVALID_ARGUMENT')
    expect(await codeOf(() => durableTool(def, async () => 'x', { timeoutMs: 2 ** 31 }))).toBe('INVALID_ARGUMENT')
    expect(await codeOf(() => durableTool(def, async () => 'x', { timeoutMs: 5000, retry: { attempts: 2 } }))).toBe('none')
  })
})

describe('retries in plain chat()', () => {
  const plainRun = async (tool: ReturnType<typeof durableTool>) => {
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: tool.name, args: {} }] } : 'ok',
    )
    await drain(chat({ adapter, messages: [{ role: 'user', content: 'go' }], tools: [tool] }))
    return adapter.requests.at(-1)?.find((m) => m.role === 'tool')?.content
  }

  it('retry in the process with the same key and the attempt number; after the last attempt, what fn threw', async () => {
    const seen: Seen[] = []
    const caught: unknown[] = []
    const tool = durableTool(toolDefinition({ name: 'p', description: 'p', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('first', { attempts: 3, delayMs: 1 }, failing(2, seen))
      await step.do('second', { attempts: 2, delayMs: 0 }, failing(99, [])).catch((error: unknown) => caught.push(error))
      return 'ok'
    })
    await plainRun(tool)
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3])
    expect(new Set(seen.map((s) => s.key)).size).toBe(1)
    expect(seen[0]!.key).toMatch(/^plain:.+:first$/)
    expect(caught).toHaveLength(1)
    expect(caught[0]).toBeInstanceOf(Error)
    expect((caught[0] as Error).message).toBe('boom 2')
  })

  it("a step's and a tool's timeoutMs work in plain chat() too", async () => {
    const signals: AbortSignal[] = []
    const stepTimeout = durableTool(toolDefinition({ name: 'p', description: 'p', inputSchema: z.object({}) }), async (_a, { step }) => {
      try {
        await step.do('hang', { timeoutMs: 10 }, ({ signal }) => {
          signals.push(signal)
          return new Promise(() => {})
        })
        return 'finished'
      } catch (error) {
        return String((error as { code?: string }).code)
      }
    })
    expect(await plainRun(stepTimeout)).toBe('STEP_FAILED')
    expect(signals[0]?.aborted).toBe(true)
    const toolTimeout = durableTool(
      toolDefinition({ name: 'q', description: 'q', inputSchema: z.object({}) }),
      async (_a, { step }) =>
        step.do('hang', ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('x')))),
      { timeoutMs: 10 },
    )
    expect(await plainRun(toolTimeout)).toContain('timed out after 10 ms')
  })
})
