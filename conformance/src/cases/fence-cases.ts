import assert from 'node:assert/strict'
import type { HarnessStore, Lease, LeaseStore, LogRecord } from '@tanstack/ai-harness/store'
import { defineCase, expectCode, readLog } from '../case.js'

const TTL = 30_000
const leasesOf = (store: { leases?: LeaseStore }): LeaseStore => {
  assert.ok(store.leases, 'the store has no leases')
  return store.leases
}
const rec = (n: number, by = 'holder') => ({ type: 'test.fenced', n, by })

/** An append that must land: a LEASE_LOST here means the store refused the current lease. */
async function landsWith(store: HarnessStore, seq: number, records: LogRecord[], lease: Lease, what: string): Promise<void> {
  try {
    await store.append('s', seq, records, { lease })
  } catch (error) {
    if ((error as { code?: string }).code !== 'LEASE_LOST') throw error
    assert.fail(
      `${what}: an append with the session's current lease (owner ${lease.owner}, fence ${lease.fence}, as acquire returned it) was refused with LEASE_LOST`,
    )
  }
}

/** Takes over a lease that has just expired: LEASE_HELD here means the store kept it live at expiresAt. */
async function takeOver(leases: LeaseStore, old: Lease, owner: string, now: number): Promise<Lease> {
  try {
    return await leases.acquire(old.logId, owner, TTL)
  } catch (error) {
    if ((error as { code?: string }).code !== 'LEASE_HELD') throw error
    assert.fail(
      `the lease expired at ${old.expiresAt} and now is ${now}, yet acquire says it is held: a lease is live only while now < expiresAt`,
    )
  }
}

/**
 * Fenced appends (`append(logId, seq, records, { lease })`): a store that fences refuses,
 * with LEASE_LOST and writing nothing, an append whose lease is not the session's
 * current held lease. A store that cannot check this atomically with the seq declares
 * `skip: { fencing: 'why' }`.
 */
export const fenceCases = [
  defineCase({
    id: 'log.fence.current-lease',
    title: 'an append with the current lease lands, also after a renew and from another instance; an append without a lease is not fenced',
    requires: ['leases', 'fencing'],
    async run({ store, openStore, clock }) {
      const other = await openStore()
      const lease = await leasesOf(store).acquire('s', 'host-a', TTL)
      await landsWith(store, 1, [rec(1)], lease, 'the first append')
      clock.advance(TTL / 2)
      const renewed = await leasesOf(store).renew(lease, TTL)
      await landsWith(other, 2, [rec(2)], renewed, 'an append with the renewed lease')
      await landsWith(store, 3, [rec(3)], lease, 'an append with the lease as acquired, after a renew')
      await other.append('s', 4, [rec(4, 'unfenced')])
      await expectCode(store.append('s', 2, [rec(9)], { lease }), 'LOG_CONFLICT', 'a fenced append still checks the seq')
      assert.deepEqual(await readLog(other, 's'), [rec(1), rec(2), rec(3), rec(4, 'unfenced')])
    },
  }),
  defineCase({
    id: 'log.fence.superseded',
    title: 'after the lease expired and another owner took it, an append with the old lease fails with LEASE_LOST and writes nothing',
    requires: ['leases', 'fencing'],
    async run({ store, openStore, clock }) {
      const successor = await openStore()
      const old = await leasesOf(store).acquire('s', 'host-a', TTL)
      await landsWith(store, 1, [rec(1)], old, 'the holder’s first append')
      clock.advance(TTL)
      const current = await takeOver(leasesOf(successor), old, 'host-b', clock.now())
      await expectCode(store.append('s', 2, [rec(2, 'stale')], { lease: old }), 'LEASE_LOST', 'append with the superseded lease')
      await expectCode(
        successor.append('s', 2, [rec(2, 'stale')], { lease: old }),
        'LEASE_LOST',
        'the old lease, from the new holder’s instance',
      )
      assert.deepEqual(await readLog(successor, 's'), [rec(1)], 'the superseded append wrote')
      await landsWith(successor, 2, [rec(2, 'successor')], current, 'the new holder’s append')
      await expectCode(store.append('s', 3, [rec(3, 'stale')], { lease: old }), 'LEASE_LOST', 'the old lease at the right seq')
      assert.deepEqual(await readLog(store, 's'), [rec(1), rec(2, 'successor')])
    },
  }),
  defineCase({
    id: 'log.fence.released',
    title: 'after release, an append with the released lease fails with LEASE_LOST, also when the same owner took a new lease',
    requires: ['leases', 'fencing'],
    async run({ store, openStore }) {
      const other = await openStore()
      const first = await leasesOf(store).acquire('s', 'host-a', TTL)
      await landsWith(store, 1, [rec(1)], first, 'the first append')
      await leasesOf(store).release(first)
      await expectCode(store.append('s', 2, [rec(2, 'released')], { lease: first }), 'LEASE_LOST', 'append with a released lease')
      const second = await leasesOf(other).acquire('s', 'host-a', TTL)
      assert.ok(second.fence > first.fence)
      await expectCode(other.append('s', 2, [rec(2, 'released')], { lease: first }), 'LEASE_LOST', 'the same owner’s earlier lease')
      await landsWith(other, 2, [rec(2)], second, 'an append with the new lease')
      assert.deepEqual(await readLog(store, 's'), [rec(1), rec(2)])
    },
  }),
  defineCase({
    id: 'log.fence.deleted',
    title:
      'delete ends the lease: an append with a lease taken before the delete fails with LEASE_LOST, and the next lease has a greater fence',
    requires: ['leases', 'fencing'],
    async run({ store, openStore }) {
      const other = await openStore()
      const before = await leasesOf(store).acquire('s', 'host-a', TTL)
      await landsWith(store, 1, [rec(1)], before, 'the first append')
      await other.delete('s')
      await expectCode(
        store.append('s', 1, [rec(1, 'after delete')], { lease: before }),
        'LEASE_LOST',
        'append at 1 with a lease from before the delete',
      )
      assert.deepEqual(await readLog(other, 's'), [])
      const after = await leasesOf(other).acquire('s', 'host-a', TTL)
      assert.ok(after.fence > before.fence, `the lease after the delete has fence ${after.fence}, not above ${before.fence}`)
      await expectCode(
        other.append('s', 1, [rec(1, 'after delete')], { lease: before }),
        'LEASE_LOST',
        'the old lease once a new one exists',
      )
      await landsWith(other, 1, [rec(1, 'new')], after, 'an append with the lease taken after the delete')
      assert.deepEqual(await readLog(store, 's'), [rec(1, 'new')])
    },
  }),
  defineCase({
    id: 'log.fence.forged',
    title: 'a lease that is not the current one in owner or fence (a later fence included) fails with LEASE_LOST',
    requires: ['leases', 'fencing'],
    async run({ store }) {
      // Two acquires, so an earlier fence of the same owner exists (fences start at 1 or more).
      const leases = leasesOf(store)
      await leases.release(await leases.acquire('s', 'host-a', TTL))
      const lease = await leases.acquire('s', 'host-a', TTL)
      const forged: Array<[string, Lease]> = [
        ['another owner, same fence', { ...lease, owner: 'host-b' }],
        ['the owner with a later fence', { ...lease, fence: lease.fence + 1 }],
        ['the owner with an earlier fence', { ...lease, fence: lease.fence - 1 }],
        ['an owner that differs in case', { ...lease, owner: 'HOST-A' }],
      ]
      for (const [what, bad] of forged) await expectCode(store.append('s', 1, [rec(1, what)], { lease: bad }), 'LEASE_LOST', what)
      await expectCode(store.append('u', 1, [rec(1)], { lease: { ...lease, logId: 'u' } }), 'LEASE_LOST', 'a session nobody leased')
      assert.deepEqual(await readLog(store, 's'), [])
      assert.deepEqual(await readLog(store, 'u'), [])
      await landsWith(store, 1, [rec(1)], lease, 'an append with the real lease')
    },
  }),
]
