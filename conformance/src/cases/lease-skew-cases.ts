import assert from 'node:assert/strict'
import type { HarnessStore, Lease, LeaseStore } from '@tanstack/ai-harness/store'
import { assertSame, defineCase, expectCode, readFrom } from '../case.js'

// Hosts whose clocks differ. A lease's expiry is written from the holder's clock and judged
// by the clock of the instance that asks. The core README's bound: a holder that renews
// every R keeps its lease while clocks differ by less than ttl - R (the harness renews every
// ttl / 3). Beyond it two hosts may both think they hold the lease, and the log stays safe
// because every append is conditional on its seq.

const TTL = 30_000
const RENEW_EVERY = TTL / 3
const leasesOf = (store: { leases?: LeaseStore }): LeaseStore => {
  assert.ok(store.leases, 'the store has no leases')
  return store.leases
}
const rec = (by: string, n: number) => ({ type: 'test.skew', by, n })

export const leaseSkewCases = [
  defineCase({
    id: 'lease.skew.within-bound',
    title:
      'with another instance’s clock ahead or behind by just under ttl - renew interval, a holder that renews every third of the ttl keeps its lease',
    requires: ['leases'],
    async run({ store, clock, openSkewedStore }) {
      const bound = TTL - RENEW_EVERY - 1
      for (const [what, skew] of [
        ['ahead', bound],
        ['behind', -bound],
      ] as const) {
        const other = leasesOf(await openSkewedStore(skew))
        let lease = await leasesOf(store).acquire(what, 'host-a', TTL)
        for (let tick = 1; tick <= 6; tick++) {
          clock.advance(RENEW_EVERY)
          // The other host tries at the worst moment: just before the holder's renewal.
          await expectCode(
            other.acquire(what, 'host-b', TTL),
            'LEASE_HELD',
            `an instance whose clock is ${Math.abs(skew)} ms ${what}, ${tick * RENEW_EVERY} ms after the lease was taken (renewed every ${RENEW_EVERY} ms)`,
          )
          lease = await leasesOf(store).renew(lease, TTL)
        }
      }
    },
  }),
  defineCase({
    id: 'lease.skew.beyond-bound',
    title:
      'beyond the bound an instance whose clock is ahead takes a lease its holder still thinks live, and the log stays safe: each seq lands once, and the old holder’s next renew is LEASE_LOST',
    requires: ['leases'],
    async run({ store: a, clock, openSkewedStore }) {
      const b: HarnessStore = await openSkewedStore(TTL - RENEW_EVERY)
      const leaseA: Lease = await leasesOf(a).acquire('s', 'host-a', TTL)
      await a.append('s', 1, [rec('a', 1)])
      clock.advance(RENEW_EVERY)
      // By b's clock the lease expired just now; by a's it lives for another 20 s.
      const leaseB = await leasesOf(b)
        .acquire('s', 'host-b', TTL)
        .catch((error: { code?: string }) => {
          if (error.code !== 'LEASE_HELD') throw error
          assert.fail(
            'the lease expired by the clock of the instance that asks, yet it was held: expiry is judged by the caller’s clock, now < expiresAt',
          )
        })
      assert.ok(leaseB.fence > leaseA.fence, `the new holder's fence ${leaseB.fence} is not above ${leaseA.fence}`)
      // Both drive the session, each appending at the seq it believes is next.
      await b.append('s', 2, [rec('b', 2)])
      await expectCode(a.append('s', 2, [rec('a', 2)]), 'LOG_CONFLICT', 'the old holder appending at a seq the new one took')
      const racing = await Promise.allSettled([a.append('s', 3, [rec('a', 3)]), b.append('s', 3, [rec('b', 3)])])
      assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 1, 'both holders appended at seq 3: exactly one lands')
      const log = (await readFrom(a, 's')).map((e) => [e.seq, e.record.n])
      assertSame(
        log,
        [
          [1, 1],
          [2, 2],
          [3, 3],
        ],
        'the log written by two holders',
      )
      // The old holder learns it lost the lease at its next renewal, though its clock says it is live.
      await expectCode(leasesOf(a).renew(leaseA, TTL), 'LEASE_LOST', 'the old holder renewing after another instance took the lease')
      await expectCode(leasesOf(a).acquire('s', 'host-a', TTL), 'LEASE_HELD', 'the old holder taking the lease back from the new one')
      assert.equal((await leasesOf(b).renew(leaseB, TTL)).fence, leaseB.fence, 'the new holder renews its lease')
    },
  }),
]
