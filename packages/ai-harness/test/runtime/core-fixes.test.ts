import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, HARNESS_EVENTS } from '@tanstack/ai-harness'
import { SecretScanner } from '@tanstack/ai-harness/log'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { MAX_TIME_MS, WAITING_FOR_PERSON } from '../../src/contract/types.js'
import { retryAt, stepPolicy } from '../../src/runtime/step-retry.js'
import { askHarness, chatHarness, faultWorld } from '../support/faults.js'
import { batchModel, codeOf, createWorld, drain, isResultOf, recordsOf, runUntilCrash } from '../support/harness.js'

const TOKEN = 'tok_live_8gH2kP9qW4zX7mL3vB6'

describe('a step value that holds a secret the session learned after the value was stored', () => {
  it('is refused with STEP_SECRET on the run after a crash, as it would be on the first run', async () => {
    const world = createWorld()
    const codes: string[] = []
    const fetchToken = durableTool(
      toolDefinition({ name: 'fetch_token', description: 'Fetches a token', inputSchema: z.object({}) }),
      async (_args, { step, secret }) => {
        try {
          // Stored while the session does not know the token as a secret yet.
          await step.do('fetch', () => TOKEN)
        } catch (error) {
          codes.push(String((error as { code?: unknown }).code))
          throw error
        }
        await secret('apiToken')
        return 'fetched'
      },
    )
    const harness = defineHarness({
      name: 'tokens',
      adapter: batchModel([{ name: 'fetch_token' }]),
      tools: [fetchToken],
      resolveSecret: (name) => (name === 'apiToken' ? TOKEN : undefined),
    })
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend(isResultOf('fetch_token'), 'before')
    await runUntilCrash(first, (await first.host.open({ sessionId: 'tok' })).send('fetch it'))
    expect(codes).toEqual([])

    world.expireLeases()
    const again = await world.start(harness, 'host-2').host.open({ sessionId: 'tok' })
    const chunks = await drain(again.resume())
    expect(codes).toEqual(['STEP_SECRET'])
    const [result] = recordsOf(await again.entries(), 'harness.tool.result')
    expect(result?.ok).toBe(false)
    expect(new SecretScanner([TOKEN]).find(chunks)).toBeNull()
  })
})

/** A harness whose tool asks a person for a note (any string). */
function noteHarness() {
  return defineHarness({
    name: 'notes',
    adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'note', args: {} }] } : 'Noted.')),
    tools: [
      durableTool(toolDefinition({ name: 'note', description: 'Asks for a note', inputSchema: z.object({}) }), async (_a, { step }) => {
        const { note } = await step.ask({ name: 'note', message: 'Your note?', schema: z.object({ note: z.string() }) })
        return note.length
      }),
    ],
  })
}

describe('an answer the store refuses as too large', () => {
  it('leaves the session waiting for a person: its wakeup stays at WAITING_FOR_PERSON and it stays on the waiting list', async () => {
    const world = faultWorld()
    const { host } = world.machine(noteHarness(), 'host')
    const chunks = await drain((await host.open({ sessionId: 'n' })).send('go'))
    const question = chunks.find((c) => (c as { name?: string }).name === HARNESS_EVENTS.question) as { value: { questionId: string } }
    expect(world.traces('n').wakeup).toBe(WAITING_FOR_PERSON)

    const code = await codeOf(() =>
      host.answer({ sessionId: 'n', questionId: question.value.questionId, answer: { note: 'x'.repeat(300_000) } }),
    )
    expect(code).toBe('RECORD_TOO_LARGE')
    expect(world.traces('n').wakeup).toBe(WAITING_FOR_PERSON)
    expect(await world.direct.sessions?.waiting()).toEqual(['n'])
  })
})

describe('session.status after a run that did nothing', () => {
  it("reads 'idle' after resume() of a session with no open turn", async () => {
    const world = faultWorld()
    const session = await world.machine(chatHarness(), 'host').host.open({ sessionId: 'c' })
    await drain(session.send('hello'))
    expect(session.status).toBe('idle')
    await drain(session.resume())
    expect(session.status).toBe('idle')
  })

  it("reads 'parked' after send() on a waiting session is refused with SESSION_BUSY", async () => {
    const world = faultWorld()
    const { host } = world.machine(askHarness(), 'host')
    await drain((await host.open({ sessionId: 'a' })).send('go'))
    const again = await host.open({ sessionId: 'a' })
    expect(again.status).toBe('parked')
    expect(await codeOf(() => drain(again.send('hello?')))).toBe('SESSION_BUSY')
    expect(again.status).toBe('parked')
  })
})

describe('the failure text of a step attempt', () => {
  it('is redacted before it is cut, so a secret across the cut leaves no part of itself in the log', async () => {
    const world = createWorld()
    const failing = durableTool(
      toolDefinition({ name: 'call_api', description: 'Calls an API', inputSchema: z.object({}) }),
      async (_a, { step }) => {
        await step.do('call', { attempts: 2, delayMs: 0, isFinal: () => true }, () => {
          // 1 990 characters, then the token: the 2 000-character cut falls inside it.
          throw new Error(`${'x'.repeat(1_990)}${TOKEN}`)
        })
      },
    )
    const harness = defineHarness({ name: 'api', adapter: batchModel([{ name: 'call_api' }]), tools: [failing] })
    const session = await world.start(harness, 'host').host.open({ sessionId: 'f', secrets: { apiToken: TOKEN } })
    await drain(session.send('call it'))
    const [failed] = recordsOf(await session.entries(), 'harness.step.failed')
    expect(failed?.error).toBeDefined()
    // The first ten characters of the token would survive a cut made before the redaction.
    expect(String(failed!.error)).not.toContain(TOKEN.slice(0, 10))
  })
})

describe('retry waits near the latest time a store keeps', () => {
  it('a valid but huge backoff never makes a retry due at WAITING_FOR_PERSON (the mark of a session waiting for a person)', () => {
    const policy = stepPolicy({ attempts: 5, delayMs: 1_000, backoff: 1e300 })
    const at = 1_700_000_000_000
    expect(retryAt(policy, 1, at)).toBe(at + 1_000)
    expect(retryAt(policy, 3, at)).toBeLessThan(WAITING_FOR_PERSON)
    expect(retryAt(policy, 3, at)).toBe(MAX_TIME_MS - 1)
  })

  it('a step whose backoff grows huge parks until just before WAITING_FOR_PERSON: the session is not listed as waiting for a person', async () => {
    const world = faultWorld()
    const tool = durableTool(toolDefinition({ name: 'flaky', description: 'Fails', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('call', { attempts: 3, delayMs: 1, backoff: 1e300 }, () => {
        throw new Error('down')
      })
    })
    const harness = defineHarness({ name: 'flaky', adapter: batchModel([{ name: 'flaky' }]), tools: [tool] })
    await drain((await world.machine(harness, 'host').host.open({ sessionId: 'b' })).send('go'))
    const failures = recordsOf(await world.read('b'), 'harness.step.failed')
    expect(failures.map((f) => f.attempt)).toEqual([1, 2])
    expect(failures[1]!.retryAt).toBe(MAX_TIME_MS - 1)
    expect(world.traces('b').wakeup).toBe(MAX_TIME_MS - 1)
    expect(await world.direct.sessions?.waiting()).toEqual([])
  })

  it('step.do refuses a delayMs that step.sleep refuses (a wait past the latest time a store keeps), before fn runs', async () => {
    const world = createWorld()
    const codes: string[] = []
    let runs = 0
    const tool = durableTool(toolDefinition({ name: 'wait', description: 'Waits', inputSchema: z.object({}) }), async (_a, { step }) => {
      for (const [name, run] of [
        ['sleep', () => step.sleep('nap', MAX_TIME_MS)],
        ['do', () => step.do('try', { attempts: 2, delayMs: MAX_TIME_MS }, () => runs++)],
      ] as const) {
        codes.push(`${name}:${await codeOf(run)}`)
      }
      return 'ok'
    })
    const harness = defineHarness({ name: 'waits', adapter: batchModel([{ name: 'wait' }]), tools: [tool] })
    await drain((await world.start(harness, 'host').host.open({ sessionId: 'w' })).send('go'))
    expect(codes).toEqual(['sleep:INVALID_ARGUMENT', 'do:INVALID_ARGUMENT'])
    expect(runs).toBe(0)
  })
})
