import assert from 'node:assert/strict'
import type { Lease, LeaseStore } from '@tanstack/ai-harness'
import { defineCase, expectCode } from '../case.js'

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
      await expectCode(other.acquire('s', 'host-b', TTL), 'LEASE_HELD', 'second owner')
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
      const b = await leases.acquire('s', 'host-b', TTL)
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
    id: 'lease.race',
    title: 'several instances acquiring one free lease at once: exactly one wins',
    requires: ['leases', 'races'],
    async run({ openStore, concurrency }) {
      const stores = await Promise.all(Array.from({ length: concurrency }, () => openStore()))
      const outcomes = await Promise.allSettled(stores.map((s, i) => leasesOf(s).acquire('s', `host-${i}`, TTL)))
      const winners = outcomes.filter((o) => o.status === 'fulfilled')
      assert.equal(winners.length, 1, `${winners.length} owners got the lease`)
      for (const o of outcomes) {
        if (o.status === 'rejected') assert.equal((o.reason as { code?: string }).code, 'LEASE_HELD', String(o.reason))
      }
      await Promise.all(stores.map((s) => s.close?.()))
    },
  }),
]
