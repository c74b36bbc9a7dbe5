import { type Clock, createManualClock, readAll } from '@tanstack/ai-harness'
import { describe, expect, it } from 'vitest'
import { storesOfTest } from './support/stores.js'

// The store has no clock: a lease's expiry is written from the holder's clock and read
// against the taker's. The README's bound: a holder that renews every R keeps its lease
// while clocks differ by less than ttl - R (the harness renews every ttl / 3: 2/3 of the
// ttl). Beyond it two hosts may both think they hold the lease, and the log stays safe
// because every append is a conditional write on the batch slot.
const stores = storesOfTest('skew')

const TTL = 30_000
const RENEW_EVERY = TTL / 3

/** Two hosts on one prefix; B's clock runs `skewMs` ahead of A's. */
function skewedHosts(skewMs: number) {
  const real = createManualClock()
  const prefix = stores.prefix()
  const host = (offset: number) => {
    const clock: Clock = { now: () => real.now() + offset }
    return { store: stores.open({ prefix, clock }), clock }
  }
  return { real, a: host(0), b: host(skewMs) }
}

describe('clock skew between hosts', () => {
  it.each([
    ['ahead', TTL - RENEW_EVERY - 1],
    ['behind', -(TTL - RENEW_EVERY - 1)],
  ])('within the bound (B %s by just under ttl - renew interval) a renewing holder keeps its lease', async (_, skew) => {
    const { real, a, b } = skewedHosts(skew)
    let lease = await a.store.leases.acquire('s', 'host-a', TTL)
    for (let tick = 0; tick < 6; tick++) {
      real.advance(RENEW_EVERY)
      // B tries at the worst moment: just before A's renewal lands.
      await expect(b.store.leases.acquire('s', 'host-b', TTL)).rejects.toMatchObject({ code: 'LEASE_HELD' })
      lease = await a.store.leases.renew(lease, TTL)
    }
  })

  it('beyond the bound two hosts may both hold the lease, and the log stays safe: each seq lands once', async () => {
    const { real, a, b } = skewedHosts(TTL - RENEW_EVERY)
    const leaseA = await a.store.leases.acquire('s', 'host-a', TTL)
    await a.store.append('s', 1, [{ type: 't', by: 'a', n: 1 }])
    real.advance(RENEW_EVERY)
    // B's clock says A's lease expired; by A's clock it is still live for another 20 s.
    const leaseB = await b.store.leases.acquire('s', 'host-b', TTL)
    expect(a.clock.now()).toBeLessThan(leaseA.expiresAt)
    expect(leaseB.fence).toBeGreaterThan(leaseA.fence)
    // Both drive the session and append at the seq each believes is next.
    await b.store.append('s', 2, [{ type: 't', by: 'b', n: 2 }])
    await expect(a.store.append('s', 2, [{ type: 't', by: 'a', n: 2 }])).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 3 })
    const racing = await Promise.allSettled([
      a.store.append('s', 3, [{ type: 't', by: 'a', n: 3 }]),
      b.store.append('s', 3, [{ type: 't', by: 'b', n: 3 }]),
    ])
    expect(racing.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect((await readAll(a.store, 's')).map((e) => [e.seq, e.record.n])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ])
    // A learns it lost the lease at its next renewal.
    await expect(a.store.leases.renew(leaseA, TTL)).rejects.toMatchObject({ code: 'LEASE_LOST' })
  })
})
