import { createHost, createWorker } from '@tanstack/ai-harness'
import { createManualClock } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { gate, stepHarness, within } from '../support/faults.js'
import { drain } from '../support/harness.js'

// A store that proves a host dead (`leases.orphans`; here the memory store, whose `close()`
// plays the crash) lets a worker take the session at once: the clock never moves, so no
// lease expires and no wakeup falls due.
describe('the sessions of a dead host, on a store that proves it dead', () => {
  async function deadHostMidStep() {
    const data = createMemoryData()
    const clock = createManualClock(1_000_000)
    const stuck = gate()
    const rerun = gate()
    let calls = 0
    const { harness, keys } = stepHarness(() => {
      if (++calls === 1) return stuck.promise.then(() => 'late')
      rerun.open()
      return 'done'
    })
    const dying = memoryStore({ data, clock })
    const host = createHost({ store: dying, harnesses: harness, clock, hostId: 'web-1' })
    const session = await host.open({ sessionId: 's' })
    const turn = drain(session.send('go')).catch(() => {})
    while (keys.length === 0) await new Promise((resolve) => setImmediate(resolve))
    await dying.close() // the process is gone: its store instance with it
    return { data, clock, harness, keys, turn, stuck, rerun }
  }

  it('a worker poll resumes it at once, with no lease expiry and no due wakeup', async () => {
    const { data, clock, harness, keys, turn, stuck } = await deadHostMidStep()
    const store = memoryStore({ data, clock })
    expect(await store.wakeups.due(10)).toEqual([]) // its wakeup sits at the lease's expiry
    const worker = createWorker({ store, harnesses: harness, clock, workerId: 'worker-1' })
    expect((await worker.poll()).resumed).toEqual(['s'])
    expect(keys).toHaveLength(2)
    expect(keys[1]).toBe(keys[0]) // the step in flight runs again, with the same idempotency key
    const records = (await store.read('s')).map((e) => e.record)
    expect(records.filter((r) => r.type === 'harness.turn.finished')).toHaveLength(1)
    stuck.open()
    await turn
  })

  it('a started worker finds it within orphanPollMs, without a poll of its wakeups', async () => {
    const { data, clock, harness, turn, stuck } = await deadHostMidStep()
    const store = memoryStore({ data, clock })
    const worker = createWorker({ store, harnesses: harness, clock, pollMs: 60_000, orphanPollMs: 10 })
    worker.start()
    const started = performance.now()
    while (!(await store.read('s')).some((e) => e.record.type === 'harness.turn.finished')) {
      if (performance.now() - started > 5_000) throw new Error('the started worker did not take the dead host’s session')
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await worker.stop()
    stuck.open()
    await turn
  })

  it('a started worker looks at once: no first interval, and not behind its poll’s sweep and claim', async () => {
    const { data, clock, harness, keys, turn, stuck, rerun } = await deadHostMidStep()
    const store = memoryStore({ data, clock })
    // The poll's other calls never answer (a slow store), and the next look is a minute away.
    const hung = new Promise<never>(() => {})
    const slow = {
      ...store,
      wakeups: { ...store.wakeups, claim: () => hung },
      sessions: { ...store.sessions, waiting: () => hung },
    }
    const worker = createWorker({ store: slow, harnesses: harness, clock, pollMs: 60_000, orphanPollMs: 60_000 })
    worker.start()
    await within(5_000, rerun.promise, 'the step of the dead host’s turn')
    expect(keys).toHaveLength(2)
    stuck.open()
    await turn
    void worker.stop()
  })

  it('a live host is no orphan: a worker leaves its session alone', async () => {
    const data = createMemoryData()
    const clock = createManualClock(1_000_000)
    const stuck = gate()
    const { harness, keys } = stepHarness(() => stuck.promise.then(() => 'done'))
    const host = createHost({ store: memoryStore({ data, clock }), harnesses: harness, clock })
    const session = await host.open({ sessionId: 's' })
    const turn = drain(session.send('go'))
    while (keys.length === 0) await new Promise((resolve) => setImmediate(resolve))
    const worker = createWorker({ store: memoryStore({ data, clock }), harnesses: harness, clock })
    expect(await worker.poll()).toEqual({ resumed: [], busy: [], idle: [], failed: [] })
    expect(keys).toHaveLength(1)
    stuck.open()
    await turn
  })
})
