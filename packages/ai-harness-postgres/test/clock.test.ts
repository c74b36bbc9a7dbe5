import { createManualClock } from '@tanstack/ai-harness/store'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { database } from './instances.js'

// The store's own clock: without an injected clock, leases and wakeups are compared with
// the database server's time, in the statement that compares, so a host whose clock is
// wrong cannot take a lease that is still held, nor see a wakeup early.

const TTL = 60_000
const serverMs = async (db: ReturnType<typeof database>) =>
  Number((await db.sql('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now'))[0]!.now)

describe('the store clock (pg)', () => {
  const db = database('pg')
  afterAll(() => db.close())
  afterEach(() => void vi.restoreAllMocks())
  /** Every Date.now() of this process (the host's clock) is off by `ms` from here on. */
  const skewHostClock = (ms: number) => {
    const real = Date.now.bind(Date)
    vi.spyOn(Date, 'now').mockImplementation(() => real() + ms)
  }

  it('now() reads the server', async () => {
    const store = db.instance(await db.schema('now'))
    skewHostClock(-10 * TTL)
    const before = await serverMs(db)
    const now = await store.now()
    const after = await serverMs(db)
    expect(now).toBeGreaterThanOrEqual(before - 1)
    expect(now).toBeLessThanOrEqual(after)
  })

  it.each([
    [3, -3],
    [-3, 3],
  ])('hosts skewed by %i and %i lease lengths: leases stay exclusive, and wakeups are not early', async (skewA, skewB) => {
    const schema = await db.schema('skew')
    const [a, b] = [db.instance(schema), db.instance(schema)]
    skewHostClock(skewA * TTL)
    const before = await serverMs(db)
    const lease = await a.leases.acquire('s', 'host-a', TTL)
    expect(lease.expiresAt).toBeGreaterThanOrEqual(before + TTL)
    expect(lease.expiresAt).toBeLessThanOrEqual((await serverMs(db)) + TTL)
    await a.wakeups.schedule('s', before + TTL)
    vi.restoreAllMocks()
    skewHostClock(skewB * TTL)
    await expect(b.leases.acquire('s', 'host-b', TTL)).rejects.toMatchObject({ code: 'LEASE_HELD' })
    await expect(b.leases.renew(lease, TTL)).resolves.toMatchObject({ fence: lease.fence })
    expect(await b.wakeups.due(10)).toEqual([])
    expect(await b.wakeups.claim(10, TTL)).toEqual([])
    await b.wakeups.schedule('t', before - 1)
    expect((await b.wakeups.claim(10, TTL)).map((w) => w.logId)).toEqual(['t'])
  })
})

describe.each(['pg', 'PGlite'] as const)('an injected clock (%s)', (name) => {
  const db = database(name)
  afterAll(() => db.close())

  it('is what now(), leases and wakeups read', async () => {
    const clock = createManualClock(Date.UTC(2001, 0, 1))
    const store = db.instance(await db.schema('injected'), { clock })
    expect(await store.now()).toBe(clock.now())
    const lease = await store.leases.acquire('s', 'host', TTL)
    expect(lease.expiresAt).toBe(clock.now() + TTL)
    clock.advance(TTL)
    await expect(store.leases.renew(lease, TTL)).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await store.wakeups.schedule('s', clock.now() + 1)
    expect(await store.wakeups.due(10)).toEqual([])
    clock.advance(1)
    expect(await store.wakeups.due(10)).toEqual([{ logId: 's', at: clock.now() }])
  })
})
