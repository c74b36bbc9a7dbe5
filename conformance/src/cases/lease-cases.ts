import assert from 'node:assert/strict'
import type { Lease, LeaseStore } from '@tanstack/ai-harness/store'
import { defineCase, expectCode } from '../case.js'
import { LOOK_ALIKE_IDS } from './log-id-cases.js'

const TTL = 30_000
const leasesOf = (store: { leases?: LeaseStore }): LeaseStore => {
  assert.ok(store.leases, 'the store has no leases')
  return store.leases
}

export const leaseCases = [
  defineCase({
    id: 'lease.acquire.exclusive',
    title: 'acquire fails at once with LEASE_HELD while another owner holds a live lease',
    requires: ['leases'],
    async run({ store, openStore }) {
      const leases = leasesOf(store)
      const other = leasesOf(await openStore())
      const a = await leases.acquire('s', 'host-a', TTL)
      assert.equal(a.owner, 'host-a')
      assert.equal(a.logId, 's')
      const refused = await other.acquire('s', 'host-b', TTL).then(
        () => assert.fail('acquire by a second owner succeeded while the first holds a live lease'),
        (error: { code?: string; expiresAt?: unknown }) => error,
      )
      assert.equal(refused.code, 'LEASE_HELD', 'second owner')
      // Optional, but never wrong: a worker that is told the expiry tries again at that moment.
      if (refused.expiresAt !== undefined)
        assert.equal(refused.expiresAt, a.expiresAt, "LEASE_HELD's expiresAt is the holder's lease's expiresAt (or absent)")
      const b = await other.acquire('t', 'host-b', TTL)
      assert.equal(b.logId, 't', 'leases of other sessions are independent')
    },
  }),
  defineCase({
    id: 'lease.expiry',
    title: 'after the lease expires (by the injected clock) another owner acquires it with a greater fence',
    requires: ['leases'],
    async run({ store, clock }) {
      const leases = leasesOf(store)
      const a = await leases.acquire('s', 'host-a', TTL)
      assert.equal(a.expiresAt, clock.now() + TTL, 'expiry comes from the injected clock')
      clock.advance(TTL - 1)
      await expectCode(leases.acquire('s', 'host-b', TTL), 'LEASE_HELD', 'one ms before expiry')
      clock.advance(1)
      const b = await leases.acquire('s', 'host-b', TTL).catch((error: { code?: string }) => {
        if (error.code !== 'LEASE_HELD') throw error
        assert.fail(
          `the lease expired at ${a.expiresAt}, yet acquire at that time says it is held: a lease is live only while now < expiresAt`,
        )
      })
      assert.ok(b.fence > a.fence, `fence ${b.fence} after ${a.fence}`)
    },
  }),
  defineCase({
    id: 'lease.renew',
    title: 'renew extends a live lease; an expired lease cannot be renewed (LEASE_LOST)',
    requires: ['leases'],
    async run({ store, clock }) {
      const leases = leasesOf(store)
      const a = await leases.acquire('s', 'host-a', TTL)
      clock.advance(TTL / 2)
      const renewed = await leases.renew(a, TTL)
      assert.equal(renewed.expiresAt, clock.now() + TTL)
      assert.equal(renewed.fence, a.fence, 'renewing keeps the fence')
      clock.advance(TTL - 1)
      await expectCode(leases.acquire('s', 'host-b', TTL), 'LEASE_HELD', 'the renewed lease still holds')
      clock.advance(1)
      await expectCode(leases.renew(renewed, TTL), 'LEASE_LOST', 'renew after expiry')
    },
  }),
  defineCase({
    id: 'lease.stale-renew',
    title: "a stale owner cannot renew its successor's lease",
    requires: ['leases'],
    async run({ store, openStore, clock }) {
      const leases = leasesOf(store)
      const other = leasesOf(await openStore())
      const a = await leases.acquire('s', 'host-a', TTL)
      clock.advance(TTL + 1)
      const b = await other.acquire('s', 'host-b', TTL)
      await expectCode(leases.renew(a, TTL), 'LEASE_LOST', 'stale renew')
      await expectCode(leases.acquire('s', 'host-c', TTL), 'LEASE_HELD', 'the successor still holds the lease')
      const renewed = await other.renew(b, TTL)
      assert.equal(renewed.fence, b.fence)
    },
  }),
  defineCase({
    id: 'lease.stale-release',
    title: "a stale owner cannot release its successor's lease",
    requires: ['leases'],
    async run({ store, openStore, clock }) {
      const leases = leasesOf(store)
      const other = leasesOf(await openStore())
      const a = await leases.acquire('s', 'host-a', TTL)
      clock.advance(TTL + 1)
      await other.acquire('s', 'host-b', TTL)
      await expectCode(leases.release(a), 'LEASE_LOST', 'stale release')
      await expectCode(leases.acquire('s', 'host-c', TTL), 'LEASE_HELD', 'the successor still holds the lease')
    },
  }),
  defineCase({
    id: 'lease.release',
    title: 'a released lease can be acquired at once by another owner, with a greater fence',
    requires: ['leases'],
    async run({ store }) {
      const leases = leasesOf(store)
      const a = await leases.acquire('s', 'host-a', TTL)
      await leases.release(a)
      const b = await leases.acquire('s', 'host-b', TTL)
      assert.ok(b.fence > a.fence, `fence ${b.fence} after ${a.fence}`)
      await expectCode(leases.renew(a, TTL), 'LEASE_LOST', 'renew of a released lease')
    },
  }),
  defineCase({
    id: 'lease.fences-increase',
    title: 'every new lease of a session gets a strictly greater fence, across release, expiry and re-acquire',
    requires: ['leases'],
    async run({ store, clock }) {
      const leases = leasesOf(store)
      const fences: number[] = []
      let lease: Lease = await leases.acquire('s', 'h0', TTL)
      fences.push(lease.fence)
      for (let i = 1; i <= 6; i++) {
        if (i % 3 === 0) await leases.release(lease)
        else if (i % 3 === 1) clock.advance(TTL)
        lease = await leases.acquire('s', i % 3 === 2 ? lease.owner : `h${i}`, TTL)
        fences.push(lease.fence)
      }
      for (let i = 1; i < fences.length; i++) assert.ok(fences[i]! > fences[i - 1]!, `fences ${fences.join(',')}`)
      const otherSession = await leases.acquire('t', 'h0', TTL)
      assert.ok(Number.isSafeInteger(otherSession.fence))
    },
  }),
  defineCase({
    id: 'lease.sub-second',
    title:
      'lease times are kept to the millisecond: a lease of 1.5 s taken at .250 holds until exactly .750 later, also after a renew of 0.8 s',
    requires: ['leases'],
    async run({ store, openStore, clock }) {
      const leases = leasesOf(store)
      const other = leasesOf(await openStore())
      clock.advance(250)
      const a = await leases.acquire('s', 'host-a', 1500)
      assert.equal(a.expiresAt, clock.now() + 1500, `expiresAt is now + ttl to the ms (${clock.now() + 1500}), not ${a.expiresAt}`)
      clock.advance(1499)
      await expectCode(other.acquire('s', 'host-b', 1500), 'LEASE_HELD', '1 ms before expiry')
      const renewed = await leases.renew(a, 800)
      assert.equal(
        renewed.expiresAt,
        clock.now() + 800,
        `a renew sets now + ttl to the ms (${clock.now() + 800}), not ${renewed.expiresAt}`,
      )
      clock.advance(799)
      await expectCode(other.acquire('s', 'host-b', 1500), 'LEASE_HELD', '1 ms before the renewed expiry')
      clock.advance(1)
      const b = await other.acquire('s', 'host-b', 1500)
      assert.ok(b.fence > a.fence)
      // Short leases too: 1 ms, 10 ms and 999 ms.
      for (const ttl of [1, 10, 999]) {
        const lease = await leases.acquire(`t${ttl}`, 'host-a', ttl)
        clock.advance(ttl - 1)
        await expectCode(other.acquire(`t${ttl}`, 'host-b', ttl), 'LEASE_HELD', `a lease of ${ttl} ms, 1 ms before its end`)
        clock.advance(1)
        await expectCode(leases.renew(lease, ttl), 'LEASE_LOST', `a lease of ${ttl} ms, renewed at its end`)
        await other.acquire(`t${ttl}`, 'host-b', ttl)
      }
    },
  }),
  defineCase({
    id: 'lease.live-until-expiry',
    title:
      'a lease is live while now < expiresAt: held and renewable 1 ms before, expired at expiresAt exactly (acquire succeeds, renew is LEASE_LOST)',
    requires: ['leases'],
    async run({ store, openStore, clock }) {
      const leases = leasesOf(store)
      const other = leasesOf(await openStore())
      const a = await leases.acquire('s', 'host-a', TTL)
      clock.set(a.expiresAt - 1)
      await expectCode(other.acquire('s', 'host-b', TTL), 'LEASE_HELD', 'at expiresAt - 1')
      const renewed = await leases.renew(a, TTL)
      assert.equal(
        renewed.expiresAt,
        a.expiresAt - 1 + TTL,
        `a renew at expiresAt - 1 sets now + ttl (${a.expiresAt - 1 + TTL}), not ${renewed.expiresAt}`,
      )
      clock.set(renewed.expiresAt - 1)
      await expectCode(other.acquire('s', 'host-b', TTL), 'LEASE_HELD', 'at the renewed expiresAt - 1')
      clock.set(renewed.expiresAt)
      await expectCode(leases.renew(renewed, TTL), 'LEASE_LOST', 'renew at expiresAt')
      const b = await other.acquire('s', 'host-b', TTL)
      assert.ok(b.fence > a.fence)
      // The same edge for a lease nobody renewed, from the other side.
      const c = await other.acquire('t', 'host-b', TTL)
      clock.set(c.expiresAt)
      await leases.acquire('t', 'host-a', TTL)
    },
  }),
  defineCase({
    id: 'lease.renew-expired-untaken',
    title: 'renewing an expired lease fails with LEASE_LOST even when nobody took it, and leaves the session free',
    requires: ['leases'],
    async run({ store, openStore, clock }) {
      const leases = leasesOf(store)
      const a = await leases.acquire('s', 'host-a', TTL)
      clock.advance(TTL + 5000)
      await expectCode(leases.renew(a, TTL), 'LEASE_LOST', 'renew of an expired lease nobody took')
      await expectCode(leases.renew(a, TTL), 'LEASE_LOST', 'the same renew again')
      const other = leasesOf(await openStore())
      const b = await other.acquire('s', 'host-b', TTL)
      assert.ok(b.fence > a.fence)
      await expectCode(leases.release(a), 'LEASE_LOST', 'release of the expired lease once another owner holds one')
      await expectCode(leases.acquire('s', 'host-a', TTL), 'LEASE_HELD', 'the new owner holds the session')
    },
  }),
  defineCase({
    id: 'lease.after-delete',
    title:
      "delete ends the session's lease: the holder's renew and release fail with LEASE_LOST before its time is up, and every lease after a delete has a greater fence, across three deletes",
    requires: ['leases'],
    async run({ store, openStore }) {
      const [leases, other] = [leasesOf(store), await openStore()]
      let last = 0
      for (let i = 0; i < 3; i++) {
        const lease = await leases.acquire('s', `host-${i}`, TTL)
        assert.ok(lease.fence > last, `the lease after delete ${i} has fence ${lease.fence}, not above ${last}`)
        last = lease.fence
        // A session with a log and a renewed lease, then one with a lease only.
        if (i % 2 === 0) {
          await store.append('s', 1, [{ type: 'test.leased', i }])
          await leases.renew(lease, TTL)
        }
        await other.delete('s')
        await expectCode(leases.renew(lease, TTL), 'LEASE_LOST', `renew of the lease of host-${i} after a delete`)
        await expectCode(leases.release(lease), 'LEASE_LOST', `release of the lease of host-${i} after a delete`)
      }
      const after = await leasesOf(other).acquire('s', 'host-b', TTL)
      assert.ok(after.fence > last, `the lease after three deletes has fence ${after.fence}, not above ${last}`)
      await expectCode(leases.acquire('s', 'host-a', TTL), 'LEASE_HELD', 'the lease taken after the deletes')
    },
  }),
  defineCase({
    id: 'lease.id.exact',
    title: "leases of look-alike ids (spaces, normal forms, case) are independent: one owner's lease never blocks another id",
    requires: ['leases'],
    async run({ store, openStore }) {
      const leases = leasesOf(store)
      const other = leasesOf(await openStore())
      const held = new Map<string, Lease>()
      for (const [i, id] of LOOK_ALIKE_IDS.entries()) {
        const lease = await (i % 2 ? other : leases).acquire(id, `owner-${i}`, TTL).catch((error: { code?: string }) => {
          if (error.code !== 'LEASE_HELD') throw error
          assert.fail(
            `the lease of ${JSON.stringify(id)} is held before anyone took it: the store treats it as the same session as a look-alike id`,
          )
        })
        assert.equal(lease.logId, id)
        held.set(id, lease)
      }
      for (const [i, id] of LOOK_ALIKE_IDS.entries()) {
        await expectCode(leases.acquire(id, 'intruder', TTL), 'LEASE_HELD', `the lease of ${JSON.stringify(id)}`)
        const renewed = await (i % 2 ? other : leases).renew(held.get(id)!, TTL)
        assert.equal(renewed.fence, held.get(id)!.fence)
      }
      await leases.release(held.get('sess')!)
      for (const id of LOOK_ALIKE_IDS.slice(1))
        await expectCode(other.acquire(id, 'intruder', TTL), 'LEASE_HELD', `after releasing "sess", ${JSON.stringify(id)}`)
    },
  }),
  defineCase({
    id: 'lease.race',
    title: 'several instances acquiring one free lease at once: exactly one wins, every time',
    requires: ['leases', 'races'],
    async run({ openRacer, concurrency }) {
      const stores = await Promise.all(Array.from({ length: concurrency }, () => openRacer()))
      for (let round = 0; round < 4; round++) {
        const outcomes = await Promise.allSettled(stores.map((s, i) => leasesOf(s).acquire(`s${round}`, `host-${i}`, TTL)))
        const winners = outcomes.filter((o) => o.status === 'fulfilled')
        assert.equal(winners.length, 1, `round ${round}: ${winners.length} owners got the lease`)
        for (const o of outcomes) {
          if (o.status === 'rejected') assert.equal((o.reason as { code?: string }).code, 'LEASE_HELD', String(o.reason))
        }
      }
      await Promise.all(stores.map((s) => s.close?.()))
    },
  }),
]
