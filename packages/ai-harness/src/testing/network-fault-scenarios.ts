import assert from 'node:assert/strict'
import { toolDefinition } from '@tanstack/ai'
import { z } from 'zod'
import type { ManualClock } from '../contract/clock.js'
import { isHarnessError } from '../contract/errors.js'
import type { HarnessStore, LogEntry } from '../contract/types.js'
import { durableTool } from '../runtime/durable-tool.js'
import { defineHarness, type Harness } from '../runtime/harness.js'
import { createHost, type HostOptions } from '../runtime/host.js'
import { createWorker } from '../runtime/worker.js'
import type { FaultProxy } from './fault-proxy.js'
import { scriptedText } from './scripted-adapter.js'
import { drain } from './streams.js'

/**
 * A real store reached through a fault proxy, for the network fault scenarios. Each
 * scenario uses its own session ids, so one target can run them all.
 */
export interface NetworkFaultTarget {
  /** A new store instance (its own client and connections) whose traffic goes through `proxy`. */
  openStore(): Promise<HarnessStore>
  /** A new store instance that talks to the server directly: the healthy rest of the world. */
  openDirectStore(): Promise<HarnessStore>
  readonly proxy: FaultProxy
  /** The clock every store instance of the target reads. */
  readonly clock: ManualClock
  /** Deadline of each store call of the hosts under test. Default 1 500 ms. */
  readonly storeTimeoutMs?: number
}

export interface NetworkFaultScenario {
  readonly name: string
  run(target: NetworkFaultTarget): Promise<void>
}

const LEASE_MS = 30_000

const chat = (): Harness => defineHarness({ name: 'net-chat', adapter: scriptedText(() => 'Hello.') })

function asker(): Harness {
  const confirm = durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) => {
    const answer = await step.ask({ name: 'ok', message: 'Proceed?', schema: z.object({ ok: z.boolean() }) })
    return answer.ok ? 'yes' : 'no'
  })
  return defineHarness({
    name: 'net-asker',
    adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'Done.')),
    tools: [confirm],
  })
}

/**
 * A tool of two steps whose effects land in `effects` with the host's name. With `hold`, the
 * first step starts, says so, and waits to be let go: its host is cut off inside it.
 */
function twoSteps(who: string, effects: string[], hold?: { started(): void; released: Promise<void> }): Harness {
  const work = durableTool(toolDefinition({ name: 'work', description: 'w', inputSchema: z.object({}) }), async (_a, { step }) => {
    await step.do('one', async () => {
      effects.push(`one ${who}`)
      hold?.started()
      await hold?.released
      return 1
    })
    await step.do('two', async () => {
      effects.push(`two ${who}`)
      return 2
    })
    return 'ok'
  })
  return defineHarness({
    name: 'net-two-steps',
    adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'work', args: {} }] } : 'Done.')),
    tools: [work],
  })
}

let sequence = 0
const sessionId = (what: string) => `net-${what}-${Date.now().toString(36)}-${sequence++}`

async function hostThroughProxy(target: NetworkFaultTarget, harness: Harness, options: Partial<HostOptions> = {}) {
  const storeTimeoutMs = target.storeTimeoutMs ?? 1_500
  return createHost({
    store: await target.openStore(),
    harnesses: harness,
    clock: target.clock,
    leaseMs: LEASE_MS,
    storeTimeoutMs,
    stopTimeoutMs: storeTimeoutMs,
    ...options,
  })
}

async function directHost(target: NetworkFaultTarget, harness: Harness) {
  return createHost({ store: await target.openDirectStore(), harnesses: harness, clock: target.clock, leaseMs: LEASE_MS })
}

/** Lets every lease run out and lets a worker (talking to the server directly) take the due sessions. */
async function workerFinishes(target: NetworkFaultTarget, harness: Harness): Promise<void> {
  target.clock.advance(LEASE_MS + 1)
  const worker = createWorker({ store: await target.openDirectStore(), harnesses: harness, clock: target.clock, leaseMs: LEASE_MS })
  await worker.poll()
  await worker.stop()
}

async function log(target: NetworkFaultTarget, id: string): Promise<LogEntry[]> {
  const store = await target.openDirectStore()
  try {
    const entries: LogEntry[] = []
    for (;;) {
      const page = await store.read(id, { after: entries.length })
      if (page.length === 0) return entries
      entries.push(...page)
    }
  } finally {
    await store.close?.()
  }
}

const count = (entries: readonly LogEntry[], type: string) => entries.filter((e) => e.record.type === type).length

async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run()
    return 'none'
  } catch (error) {
    assert.ok(isHarnessError(error), `every refusal is a HarnessError, got ${String(error)}`)
    return error.code
  }
}

const scenarios: readonly NetworkFaultScenario[] = [
  {
    name: 'a turn.started whose reply is cut after the write ran, then the network drops: close keeps the wakeup, a worker finishes the turn',
    async run(target) {
      const id = sessionId('started')
      const host = await hostThroughProxy(target, chat())
      const session = await host.open({ sessionId: id })
      const cut = target.proxy.rule({ when: 'harness.turn.started', action: 'cut-reply' })
      void cut.hit.then(() => target.proxy.blackholeAll())
      const code = await codeOf(() => drain(session.send('hi')))
      assert.equal(cut.hits, 1, 'the append reached the proxy')
      assert.equal(code, 'STORE_UNAVAILABLE')
      target.proxy.heal()
      await session.close()
      await workerFinishes(target, chat())
      const entries = await log(target, id)
      assert.equal(count(entries, 'harness.turn.started'), 1)
      assert.equal(count(entries, 'harness.turn.finished'), 1, 'the turn was finished, not stranded')
    },
  },
  {
    name: 'a turn.started whose reply is cut, the network still up: the turn goes on (the read back finds the record)',
    async run(target) {
      const id = sessionId('started-up')
      const host = await hostThroughProxy(target, chat())
      const session = await host.open({ sessionId: id })
      const cut = target.proxy.rule({ when: 'harness.turn.started', action: 'cut-reply' })
      await drain(session.send('hi'))
      await session.close()
      assert.equal(cut.hits, 1)
      const entries = await log(target, id)
      assert.equal(count(entries, 'harness.turn.started'), 1)
      assert.equal(count(entries, 'harness.turn.finished'), 1)
    },
  },
  {
    name: 'an answer whose reply is cut after it landed: answer() succeeds (or, if the network then drops, succeeds when called again), and a worker resumes the session',
    async run(target) {
      const id = sessionId('answer')
      const asking = await directHost(target, asker())
      const chunks = await drain((await asking.open({ sessionId: id })).send('go'))
      const question = chunks.find((c) => (c as { name?: string }).name === 'harness.question') as unknown as {
        value: { questionId: string }
      }
      assert.ok(question, 'the session asked')
      const answering = await hostThroughProxy(target, asker())
      const cut = target.proxy.rule({ when: 'harness.answer', action: 'cut-reply' })
      void cut.hit.then(() => target.proxy.blackholeAll())
      const first = await codeOf(() => answering.answer({ sessionId: id, questionId: question.value.questionId, answer: { ok: true } }))
      assert.ok(first === 'none' || first === 'STORE_UNAVAILABLE', `first answer: ${first}`)
      target.proxy.heal()
      await answering.answer({ sessionId: id, questionId: question.value.questionId, answer: { ok: true } })
      const worker = createWorker({ store: await target.openDirectStore(), harnesses: asker(), clock: target.clock, leaseMs: LEASE_MS })
      assert.ok((await worker.poll()).resumed.includes(id), 'the answer made the session due')
      await worker.stop()
      const entries = await log(target, id)
      assert.equal(count(entries, 'harness.answer'), 1)
      assert.equal(entries.find((e) => e.record.type === 'harness.tool.result')?.record.result, 'yes')
    },
  },
  {
    name: 'a half-open connection (the append ran, its reply never comes): the deadline ends the wait, the read back finds the record, the turn finishes',
    async run(target) {
      const id = sessionId('half-open')
      const host = await hostThroughProxy(target, chat())
      const session = await host.open({ sessionId: id })
      const hang = target.proxy.rule({ when: 'harness.turn.started', action: 'hang-reply' })
      await drain(session.send('hi'))
      await session.close()
      assert.equal(hang.hits, 1)
      const entries = await log(target, id)
      assert.equal(count(entries, 'harness.turn.finished'), 1)
      target.proxy.heal()
    },
  },
  {
    name: 'a partition (every connection blackholed): send fails within the deadline, close and shutdown return, a worker finishes the turn after',
    async run(target) {
      const id = sessionId('partition')
      const host = await hostThroughProxy(target, chat())
      const session = await host.open({ sessionId: id })
      const cut = target.proxy.rule({ when: 'harness.turn.started', action: 'hang-reply' })
      void cut.hit.then(() => target.proxy.blackholeAll())
      assert.equal(await codeOf(() => drain(session.send('hi'))), 'STORE_UNAVAILABLE')
      await session.close()
      await host.shutdown()
      target.proxy.heal()
      await workerFinishes(target, chat())
      const entries = await log(target, id)
      assert.equal(count(entries, 'harness.turn.started'), 1)
      assert.equal(count(entries, 'harness.turn.finished'), 1)
    },
  },
  {
    name: 'a holder cut off inside a step (every connection blackholed): a worker drives the session once the lease ran out; healed, the old holder starts no step and finishes nothing',
    async run(target) {
      const id = sessionId('cut-holder')
      const effects: string[] = []
      let started!: () => void
      let release!: () => void
      const isStarted = new Promise<void>((resolve) => {
        started = resolve
      })
      const released = new Promise<void>((resolve) => {
        release = resolve
      })
      const host = await hostThroughProxy(target, twoSteps('old', effects, { started, released }))
      const session = await host.open({ sessionId: id })
      const outcome = drain(session.send('go')).then(
        () => 'finished',
        (error: unknown) => (isHarnessError(error) ? error.code : String(error)),
      )
      await isStarted
      target.proxy.blackholeAll()
      await workerFinishes(target, twoSteps('worker', effects))
      target.proxy.heal()
      release()
      assert.notEqual(await outcome, 'finished', 'the cut-off holder finished a turn another host drove')
      await session.close().catch(() => {})
      await host.shutdown()
      assert.deepEqual(
        effects.filter((e) => e.startsWith('two')),
        ['two worker'],
        'the second step ran once, by the worker: the old holder started nothing after its lease ran out',
      )
      const entries = await log(target, id)
      assert.equal(count(entries, 'harness.turn.finished'), 1)
      assert.equal(count(entries, 'harness.step'), 2, 'one logged value per step: the old holder wrote none')
    },
  },
  {
    name: 'a store whose every connection is reset: open, answer, delete and a worker poll fail with STORE_UNAVAILABLE, never a raw error',
    async run(target) {
      const host = await hostThroughProxy(target, chat())
      const worker = createWorker({
        store: await target.openStore(),
        harnesses: chat(),
        clock: target.clock,
        leaseMs: LEASE_MS,
        storeTimeoutMs: 5_000,
      })
      target.proxy.resetAll()
      target.proxy.rule({ action: 'reset', times: Number.POSITIVE_INFINITY })
      try {
        assert.equal(await codeOf(() => host.open({ sessionId: sessionId('reset') })), 'STORE_UNAVAILABLE')
        assert.equal(
          await codeOf(() => host.answer({ sessionId: sessionId('reset'), questionId: 'q:ok', answer: {} })),
          'STORE_UNAVAILABLE',
        )
        assert.equal(await codeOf(() => host.delete({ sessionId: sessionId('reset') })), 'STORE_UNAVAILABLE')
        assert.equal(await codeOf(() => worker.poll()), 'STORE_UNAVAILABLE')
      } finally {
        target.proxy.heal()
      }
    },
  },
]

/**
 * The network fault scenarios: replies cut after the write ran, connections dropped and
 * half-open, each met by the runtime's deadlines and read-backs. Run each against every
 * store through a proxy, since each store's client fails in its own way. Each heals the proxy when it ends, so a failing one does not
 * leave the next in a partition.
 */
export const networkFaultScenarios: readonly NetworkFaultScenario[] = scenarios.map((scenario) => ({
  name: scenario.name,
  run: (target) => scenario.run(target).finally(() => target.proxy.heal()),
}))
