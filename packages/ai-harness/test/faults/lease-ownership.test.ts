import { toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool, type HarnessStore } from '@tanstack/ai-harness'
import { LeaseLostError, type Lease } from '@tanstack/ai-harness/store'
import { appendOf, createManualClock, scriptedText } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { chatHarness, faultWorld, gate, stepHarness } from '../support/faults.js'
import { codeOf, drain, TEST_LEASE_MS, recordsOf } from '../support/harness.js'

describe('two processes with the same host id', () => {
  it('the second waits (LEASE_HELD) while the first holds the session, and takes it after the first lets go', async () => {
    const world = faultWorld()
    const first = world.machine(chatHarness(), 'same-id')
    const second = world.machine(chatHarness(), 'same-id')
    const session = await first.host.open({ sessionId: 's' })
    expect(await codeOf(() => second.host.open({ sessionId: 's' }))).toBe('LEASE_HELD')
    await drain(session.send('hi'))
    await session.close()
    const taken = await second.host.open({ sessionId: 's' })
    await drain(taken.send('again'))
    const started = recordsOf(await world.read('s'), 'harness.turn.started')
    expect(started.map((r) => r.host)).toEqual(['same-id', 'same-id'])
    expect(started.map((r) => r.fence)).toEqual([1, 2])
  })

  it('a restarted process with the same id waits for the dead one’s lease to expire', async () => {
    const world = faultWorld()
    const dead = world.machine(chatHarness(), 'same-id')
    await dead.host.open({ sessionId: 's' })
    dead.store.freeze()
    const restarted = world.machine(chatHarness(), 'same-id')
    expect(await codeOf(() => restarted.host.open({ sessionId: 's' }))).toBe('LEASE_HELD')
    world.clock.advance(TEST_LEASE_MS)
    await drain((await restarted.host.open({ sessionId: 's' })).send('hi'))
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
  })

  it('two workers with the same id never drive one session at once', async () => {
    const world = faultWorld()
    const started = [gate(), gate()]
    const release = gate<string>()
    let runs = 0
    const { harness } = stepHarness(() => {
      started[runs++]?.open()
      return release.promise
    })
    // A host starts the turn and dies inside the step; its lease runs out.
    const { store, host } = world.machine(harness, 'host')
    void drain((await host.open({ sessionId: 's' })).send('work')).catch(() => {})
    await started[0]!.promise
    store.freeze()
    world.clock.advance(TEST_LEASE_MS)
    const a = world.worker(harness, 'worker')
    const driving = a.poll()
    await started[1]!.promise
    // The wakeup comes due again while worker A still drives the session (its claim's hold ran out).
    await world.direct.wakeups!.schedule('s', world.clock.now())
    const b = world.worker(harness, 'worker')
    expect((await b.poll()).busy).toEqual(['s'])
    release.open('done')
    expect((await driving).resumed).toEqual(['s'])
  })
})

describe('every append carries the lease', () => {
  it('the session writer passes its current lease (owner and fence) with each append', async () => {
    const world = faultWorld()
    const { harness } = stepHarness(() => 'ok')
    const { store, host } = world.machine(harness, 'host')
    const session = await host.open({ sessionId: 's' })
    await drain(session.send('work'))
    const appends = store.calls.filter((c) => c.op === 'append')
    expect(appends.length).toBeGreaterThanOrEqual(5)
    const leases = appends.map((c) => (c.args[3] as { lease?: Lease } | undefined)?.lease)
    const held = world.data.leases.get('s')!
    for (const lease of leases) expect(lease).toMatchObject({ logId: 's', owner: held.owner, fence: held.fence })
    expect(held.owner).toMatch(/^host#/)
  })

  it('a LEASE_LOST from an append stops the session like a conflict: nothing more is written, no wakeup moves', async () => {
    const world = faultWorld()
    const { harness } = stepHarness(() => 'ok')
    const { store, host } = world.machine(harness, 'host')
    const session = await host.open({ sessionId: 's' })
    store.inject({ match: appendOf('harness.step'), fault: { kind: 'fail', error: new LeaseLostError('s', 'is held by a newer fence') } })
    expect(await codeOf(() => drain(session.send('work')))).toBe('LEASE_LOST')
    const callsBefore = store.calls.length
    const logBefore = (await world.read('s')).length
    const wakeupBefore = world.traces('s').wakeup
    expect(await codeOf(() => drain(session.resume()))).toBe('LEASE_LOST')
    expect(await codeOf(() => drain(session.send('again')))).toBe('LEASE_LOST')
    await session.close()
    const after = store.calls.slice(callsBefore).map((c) => c.op)
    expect(after.filter((op) => op === 'append' || op.startsWith('wakeups.'))).toEqual([])
    expect((await world.read('s')).length).toBe(logBefore)
    expect(world.traces('s').wakeup).toBe(wakeupBefore)
  })
})

describe('times from the store’s clock', () => {
  it('a worker whose clock is behind the store’s resumes a sleep at the store’s wake time instead of putting it off', async () => {
    const data = createMemoryData()
    const storeClock = createManualClock()
    const withClock = (): HarnessStore => ({ ...memoryStore({ data, clock: storeClock }), now: async () => storeClock.now() })
    const HOUR = 3_600_000
    const sleeper = defineHarness({
      name: 'sleeper',
      adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'nap', args: {} }] } : 'Rested.')),
      tools: [
        durableTool(toolDefinition({ name: 'nap', description: 'Sleeps', inputSchema: z.object({}) }), async (_a, { step }) => {
          await step.sleep('nap', HOUR)
          return 'rested'
        }),
      ],
    })
    const host = createHost({ store: withClock(), harnesses: sleeper, clock: storeClock, leaseMs: TEST_LEASE_MS })
    await drain((await host.open({ sessionId: 's' })).send('sleep'))
    storeClock.advance(HOUR + 1)
    // The worker's own clock is three leases behind the store's.
    const behind = createManualClock(storeClock.now() - 3 * TEST_LEASE_MS)
    const worker = createWorker({ store: withClock(), harnesses: sleeper, clock: behind, leaseMs: TEST_LEASE_MS })
    await worker.poll()
    expect(recordsOf(await memoryStore({ data }).read('s'), 'harness.turn.resumed')).toHaveLength(1)
  })
})

describe('hosts whose clocks disagree (a store without a clock of its own)', () => {
  /** Two hosts on one data set, each reading time from its own clock, as on DynamoDB or S3. */
  function skewedHosts(skewMs: number) {
    const data = createMemoryData()
    const clockA = createManualClock()
    const clockB = createManualClock(clockA.now() + skewMs)
    const started = [gate(), gate()]
    const release = gate<string>()
    let runs = 0
    const { harness } = stepHarness(() => {
      started[runs++]?.open()
      return release.promise
    })
    const hostOn = (clock: ReturnType<typeof createManualClock>, hostId: string) =>
      createHost({ store: memoryStore({ data, clock }), harnesses: harness, clock, leaseMs: TEST_LEASE_MS, hostId })
    return { data, a: hostOn(clockA, 'a'), b: hostOn(clockB, 'b'), started, release }
  }

  it('a skew under the lease length: the other host cannot take a lease that is live by its holder’s clock', async () => {
    const { a, b, started, release } = skewedHosts(TEST_LEASE_MS / 2)
    const session = await a.open({ sessionId: 's' })
    const running = drain(session.send('work'))
    await started[0]!.promise
    expect(await codeOf(() => b.open({ sessionId: 's' }))).toBe('LEASE_HELD')
    release.open('done')
    await running
  })

  it('a skew of three lease lengths: the other host takes the session over, and the holder’s next write is refused: one driver per stretch of the log', async () => {
    const { data, a, b, started, release } = skewedHosts(3 * TEST_LEASE_MS)
    const session = await a.open({ sessionId: 's' })
    const running = drain(session.send('work')).catch((error: { code?: string }) => error.code)
    await started[0]!.promise
    const taken = await b.open({ sessionId: 's' })
    const resumed = drain(taken.resume())
    await started[1]!.promise
    release.open('late')
    await resumed
    expect(['LOG_CONFLICT', 'LEASE_LOST']).toContain(await running)
    const entries = await memoryStore({ data }).read('s')
    const drivers = entries.filter((e) => e.record.type === 'harness.turn.started' || e.record.type === 'harness.turn.resumed')
    expect(drivers.map((e) => [e.record.host, e.record.fence])).toEqual([
      ['a', 1],
      ['b', 2],
    ])
    expect(recordsOf(entries, 'harness.step')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  })
})

describe('a frozen host (a paused process) that thaws after another host took over', () => {
  it('writes nothing more: its held append meets the new driver’s seq and the host stops, wakeups untouched', async () => {
    const world = faultWorld()
    const started = [gate(), gate()]
    const release = gate<string>()
    let runs = 0
    const { harness } = stepHarness(() => {
      started[runs++]?.open()
      return release.promise
    })
    const frozen = world.machine(harness, 'frozen')
    const session = await frozen.host.open({ sessionId: 's' })
    const running = drain(session.send('work')).catch((error: { code?: string }) => error.code)
    await started[0]!.promise
    frozen.store.freeze()
    world.clock.advance(TEST_LEASE_MS)
    const other = world.machine(harness, 'other')
    const taken = await other.host.open({ sessionId: 's' })
    const resumed = drain(taken.resume())
    await started[1]!.promise
    release.open('done')
    await resumed
    await taken.close()
    const before = await world.read('s')
    const wakeup = world.traces('s').wakeup
    frozen.store.thaw()
    expect(['LOG_CONFLICT', 'LEASE_LOST']).toContain(await running)
    await session.close()
    expect(await world.read('s')).toEqual(before)
    expect(world.traces('s').wakeup).toBe(wakeup)
    expect(recordsOf(before, 'harness.turn.finished')).toHaveLength(1)
  })
})
