import assert from 'node:assert/strict'
import type { HarnessStore, LeaseStore } from '@tanstack/ai-harness/store'
import { defineCase, expectCode } from '../case.js'
import { untilHolds } from './real-time.js'

const TTL = 30_000
/** How long a closed holder may take to show dead: its database may free what proved it alive a moment later. */
const DEATH_SHOWS_WITHIN_MS = 5_000

const leasesOf = (store: HarnessStore): LeaseStore & Required<Pick<LeaseStore, 'orphans'>> => {
  assert.ok(store.leases?.orphans, 'the store has no leases.orphans')
  return store.leases as LeaseStore & Required<Pick<LeaseStore, 'orphans'>>
}

/** `orphans()` until it lists `logId`, for at most {@link DEATH_SHOWS_WITHIN_MS} of real time. */
async function untilOrphaned(leases: Required<Pick<LeaseStore, 'orphans'>>, logId: string): Promise<void> {
  await untilHolds(
    async () => (await leases.orphans(100)).includes(logId),
    DEATH_SHOWS_WITHIN_MS,
    `the holder of ${JSON.stringify(logId)} was closed ${DEATH_SHOWS_WITHIN_MS} ms ago, yet orphans() does not list its lease: a closed instance is a dead holder`,
  )
}

/**
 * Liveness (`leases.orphans`): a lease whose holder (the store instance that took it) is
 * provably dead is listed and taken at once, with a greater fence; a live holder's never.
 * `close()` of an instance is its death here, as a crash is in production.
 */
export const livenessCases = [
  defineCase({
    id: 'lease.orphans.live-holder',
    title: 'a lease whose holder lives is no orphan: orphans() does not list it and acquire still says LEASE_HELD',
    requires: ['leases', 'orphans'],
    async run({ store, openStore, clock }) {
      const holder = leasesOf(store)
      const other = leasesOf(await openStore())
      await holder.acquire('s', 'host-a', TTL)
      const released = await holder.acquire('r', 'host-a', TTL)
      await holder.release(released)
      clock.advance(TTL / 2)
      assert.deepEqual(await other.orphans(100), [], 'orphans() of another instance while the holder lives')
      assert.deepEqual(await holder.orphans(100), [], "orphans() of the holder's own instance")
      await expectCode(other.acquire('s', 'host-b', TTL), 'LEASE_HELD', 'acquire while the holder lives')
    },
  }),
  defineCase({
    id: 'lease.orphans.dead-holder',
    title:
      "a closed holder's unexpired lease is listed by orphans() and taken at once with a greater fence; the dead holder's fenced append is LEASE_LOST",
    requires: ['leases', 'orphans', 'fencing'],
    async run({ store, openStore }) {
      const survivor = leasesOf(store)
      const doomed = await openStore()
      const a = await leasesOf(doomed).acquire('s', 'host-a', TTL)
      await leasesOf(doomed).acquire('t', 'host-a', TTL)
      await doomed.close?.()
      await untilOrphaned(survivor, 's')
      const listed = await survivor.orphans(1)
      assert.equal(listed.length, 1, `orphans(1) returns at most one id, not ${JSON.stringify(listed)}`)
      const b = await survivor.acquire('s', 'host-b', TTL)
      assert.ok(b.fence > a.fence, `the taken-over lease has fence ${b.fence}, not greater than the dead holder's ${a.fence}`)
      await expectCode(
        store.append('s', 1, [{ type: 'app.late' }], { lease: a }),
        'LEASE_LOST',
        "the dead holder's fenced append after the takeover",
      )
      assert.ok(!(await survivor.orphans(100)).includes('s'), 'a lease taken over by a live holder is no orphan')
      const third = leasesOf(await openStore())
      await expectCode(third.acquire('s', 'host-c', TTL), 'LEASE_HELD', 'the new holder lives: its lease holds')
    },
  }),
]
