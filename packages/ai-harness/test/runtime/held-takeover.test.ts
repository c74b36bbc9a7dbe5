import { createHost, createWorker } from '@tanstack/ai-harness'
import type { Clock, HarnessStore } from '@tanstack/ai-harness/store'
import { crashable } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { stepHarness } from '../support/faults.js'
import { drain } from '../support/harness.js'

// Fake timers and Date, so the clock the host, worker and store read is the timers' clock;
// setImmediate stays real: the memory store yields on it, and the test waits on it.
beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
})
afterEach(() => {
  vi.useRealTimers()
})

const clock: Clock = { now: () => Date.now() }
const LEASE_MS = 10_000

/** Real event-loop turns until `done()`, with fake time standing still. */
async function settle(done: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 5_000; turn++) {
    if (done()) return
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`${what} never happened while the clock stood still`)
}

/**
 * A host whose process dies inside the step of a turn (its store answers nothing more, its
 * lease is left to expire); the step's later runs succeed. The clock stands still until the
 * test moves it, so the lease the turn confirmed ends one lease from now.
 */
async function hostDiesInStep() {
  const data = createMemoryData()
  const dying = crashable(memoryStore({ data, clock }))
  const stepAt: number[] = []
  const { harness } = stepHarness(() => {
    stepAt.push(clock.now())
    if (stepAt.length > 1) return 'done'
    dying.crash()
    return new Promise(() => {})
  })
  const expiresAt = clock.now() + LEASE_MS
  const session = await createHost({ store: dying, harnesses: harness, clock, hostId: 'web-1', leaseMs: LEASE_MS }).open({ sessionId: 's' })
  void drain(session.send('go')).catch(() => {})
  await settle(() => stepAt.length === 1, 'the first step')
  return { data, stepAt, harness, expiresAt }
}

it('a started worker that claims a dead host’s session before its lease runs out takes it over at the expiry, not at its next poll', async () => {
  const { data, stepAt, harness, expiresAt } = await hostDiesInStep()

  // A store with expiry only (no `leases.orphans`): the worker learns nothing from liveness.
  const inner = memoryStore({ data, clock })
  const refused: number[] = []
  const store: HarnessStore = {
    ...inner,
    leases: {
      acquire: (logId, owner, ttlMs) =>
        inner.leases.acquire(logId, owner, ttlMs).catch((error: unknown) => {
          refused.push(clock.now())
          throw error
        }),
      renew: inner.leases.renew,
      release: inner.leases.release,
    },
  }
  // The running turn's wakeup is due a renewal period (a third of the lease) before the expiry: claim it after that, before the expiry.
  await vi.advanceTimersByTimeAsync(LEASE_MS - 2_000)
  const worker = createWorker({ store, harnesses: harness, clock, workerId: 'worker-1', pollMs: 60_000 })
  worker.start()
  // The worker claimed it before the expiry and found it held.
  await settle(() => refused.length === 1, 'the claim that finds the lease held')
  expect(refused[0]).toBeLessThan(expiresAt)
  expect(stepAt).toHaveLength(1)

  await vi.advanceTimersByTimeAsync(expiresAt - clock.now() - 1)
  for (let turn = 0; turn < 200; turn++) await new Promise((resolve) => setImmediate(resolve))
  expect(stepAt, 'nothing takes the session while the lease lives').toHaveLength(1)

  await vi.advanceTimersByTimeAsync(1)
  await settle(() => stepAt.length === 2, 'the takeover at the expiry')
  // At the expiry to the ms, not at the worker's next poll (60 s on).
  expect(stepAt[1]).toBe(expiresAt)
  const stopping = worker.stop()
  await vi.advanceTimersByTimeAsync(10_000)
  await stopping
})

it('a started worker on a store that notifies (`wakeups.watch`) takes a session made due elsewhere at once, not at its next poll', async () => {
  const data = createMemoryData()
  const stepAt: number[] = []
  const { harness } = stepHarness(() => {
    stepAt.push(clock.now())
    return 'done'
  })
  const worker = createWorker({ store: memoryStore({ data, clock }), harnesses: harness, clock, pollMs: 60_000 })
  worker.start()
  await settle(() => vi.getTimerCount() > 0, 'the first poll') // nothing due: the next poll is a minute away
  // Another process takes a prompt: the session is due now, and the store tells the worker.
  const web = createHost({ store: memoryStore({ data, clock }), harnesses: harness, clock })
  await web.submit({ sessionId: 's', inputId: 'in-1', prompt: 'go' })
  await settle(() => stepAt.length === 1, 'the told worker running the turn')
  expect(stepAt[0], 'the clock never moved: no poll ran').toBe(1_000_000)
  const stopping = worker.stop()
  await vi.advanceTimersByTimeAsync(10_000)
  await stopping
})
