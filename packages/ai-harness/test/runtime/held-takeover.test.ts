import { createHost, createWorker } from '@tanstack/ai-harness'
import type { Clock, HarnessStore } from '@tanstack/ai-harness/store'
import { crashable } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { gate, stepHarness } from '../support/faults.js'
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

it('a started worker reads a held session’s log ahead of the expiry, takes the lease at the expiry, and folds what landed in between', async () => {
  const data = createMemoryData()
  const base = crashable(memoryStore({ data, clock }))
  // The holder stops renewing after its turn's first confirm (its renewals no longer reach the store), so its lease ends one lease from now.
  let renewals = 0
  const holderStore: HarnessStore = {
    ...base,
    leases: {
      ...base.leases!,
      renew: (lease, ttlMs) => (renewals++ === 0 ? base.leases!.renew(lease, ttlMs) : Promise.reject(new Error('unreachable'))),
    },
  }
  const late = gate<string>()
  const stepAt: number[] = []
  const { harness } = stepHarness(() => {
    stepAt.push(clock.now())
    return stepAt.length === 1 ? late.promise : 'again'
  })
  const expiresAt = clock.now() + LEASE_MS
  const session = await createHost({ store: holderStore, harnesses: harness, clock, hostId: 'web-1', leaseMs: LEASE_MS }).open({
    sessionId: 's',
  })
  const turn = drain(session.send('go')).catch(() => {})
  await settle(() => stepAt.length === 1, 'the first step')

  // The worker's store, expiry only (no `leases.orphans`), with its reads and lease asks on the clock.
  const inner = memoryStore({ data, clock })
  const reads: Array<{ at: number; after: number }> = []
  const acquiredAt: number[] = []
  const appended: string[] = []
  let readsAtResume = 0
  const store: HarnessStore = {
    ...inner,
    append: async (logId, expectedSeq, records, options) => {
      if (records.some((r) => r.type === 'harness.turn.resumed')) readsAtResume = reads.length
      const result = await inner.append(logId, expectedSeq, records, options)
      appended.push(...records.map((r) => r.type))
      return result
    },
    read: (logId, options) => {
      reads.push({ at: clock.now(), after: options?.after ?? 0 })
      return inner.read(logId, options)
    },
    leases: {
      acquire: (logId, owner, ttlMs) => {
        acquiredAt.push(clock.now())
        return inner.leases.acquire(logId, owner, ttlMs)
      },
      renew: inner.leases.renew,
      release: inner.leases.release,
    },
  }
  await vi.advanceTimersByTimeAsync(LEASE_MS - 2_000)
  const worker = createWorker({ store, harnesses: harness, clock, workerId: 'worker-1', pollMs: 60_000 })
  worker.start()
  await settle(() => acquiredAt.length === 1, 'the claim that finds the lease held')
  reads.length = 0

  // A second before the expiry: the log is read, nothing asked of the lease.
  await vi.advanceTimersByTimeAsync(expiresAt - 1_000 - clock.now())
  await settle(() => reads.length > 0, 'the read ahead of the expiry')
  expect(reads[0]).toEqual({ at: expiresAt - 1_000, after: 0 })
  expect(acquiredAt).toHaveLength(1)

  // Then the holder's step ends and its record lands, under its lease, after the worker's read; then the holder dies.
  base.crashOnAppend((records) => records.some((r) => r.type === 'harness.step'), 'after')
  await vi.advanceTimersByTimeAsync(500)
  late.open('landed')
  await settle(() => base.crashed, 'the holder’s step record')
  const readsBefore = reads.length

  await vi.advanceTimersByTimeAsync(expiresAt - clock.now())
  await settle(() => acquiredAt.length === 2, 'the takeover at the expiry')
  expect(acquiredAt[1], 'the lease is asked for at the expiry to the ms').toBe(expiresAt)
  await settle(() => appended.includes('harness.turn.finished'), 'the resumed turn')
  // From the expiry to the resume it reads the tail only (from where the read ahead stopped), never the whole log again.
  const atTakeover = reads.slice(readsBefore, readsAtResume)
  expect(atTakeover.length).toBeGreaterThan(0)
  expect(atTakeover.every((r) => r.at === expiresAt && r.after >= 3)).toBe(true)
  // The step record that landed in between is folded in: the step is not run again.
  expect(stepAt).toHaveLength(1)
  const records = (await inner.read('s')).map((e) => e.record)
  expect(records.filter((r) => r.type === 'harness.turn.finished')).toHaveLength(1)
  expect(records.find((r) => r.type === 'harness.tool.result')).toMatchObject({ result: 'landed' })

  const stopping = worker.stop()
  await vi.advanceTimersByTimeAsync(10_000)
  await stopping
  void turn
})
