import assert from 'node:assert/strict'
import type { WakeupStore } from '@tanstack/ai-harness'
import { defineCase } from '../case.js'

const wakeupsOf = (store: { wakeups?: WakeupStore }): WakeupStore => {
  assert.ok(store.wakeups, 'the store has no wakeups')
  return store.wakeups
}

export const wakeupCases = [
  defineCase({
    id: 'wakeup.due',
    title: 'due lists the wakeups whose time has come, oldest first, at most limit',
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      const now = clock.now()
      await w.schedule('late', now + 1000)
      await w.schedule('second', now - 10)
      await w.schedule('first', now - 20)
      await w.schedule('third', now)
      assert.deepEqual(await w.due(10), [
        { logId: 'first', at: now - 20 },
        { logId: 'second', at: now - 10 },
        { logId: 'third', at: now },
      ])
      assert.deepEqual(
        (await w.due(2)).map((x) => x.logId),
        ['first', 'second'],
      )
      clock.advance(1000)
      assert.deepEqual(
        (await w.due(10)).map((x) => x.logId),
        ['first', 'second', 'third', 'late'],
      )
      assert.equal((await w.due(10)).length, 4, 'due changes nothing')
    },
  }),
  defineCase({
    id: 'wakeup.upsert',
    title: "schedule replaces the session's wakeup: one per session",
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      const now = clock.now()
      await w.schedule('s', now - 5)
      await w.schedule('s', now + 5000)
      assert.deepEqual(await w.due(10), [])
      await w.schedule('s', now - 1)
      assert.deepEqual(await w.due(10), [{ logId: 's', at: now - 1 }])
    },
  }),
  defineCase({
    id: 'wakeup.cancel',
    title: 'cancel removes a wakeup; cancelling a missing one is fine',
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      await w.schedule('s', clock.now() - 1)
      await w.schedule('t', clock.now() - 1)
      await w.cancel('s')
      await w.cancel('s')
      await w.cancel('never-scheduled')
      assert.deepEqual(
        (await w.due(10)).map((x) => x.logId),
        ['t'],
      )
    },
  }),
  defineCase({
    id: 'wakeup.claim',
    title: 'claim takes due wakeups and hides them for holdMs; they come back if not cancelled',
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      const now = clock.now()
      for (let i = 0; i < 5; i++) await w.schedule(`s${i}`, now - 100 + i)
      const first = await w.claim(3, 10_000)
      assert.deepEqual(
        first.map((x) => x.logId),
        ['s0', 's1', 's2'],
      )
      assert.equal(first[0]!.at, now - 100, 'a claim reports the time the wakeup was due')
      const second = await w.claim(10, 10_000)
      assert.deepEqual(
        second.map((x) => x.logId),
        ['s3', 's4'],
      )
      assert.deepEqual(await w.claim(10, 10_000), [], 'claimed wakeups are hidden')
      await w.cancel('s0')
      clock.advance(10_000)
      assert.deepEqual((await w.claim(10, 10_000)).map((x) => x.logId).sort(), ['s1', 's2', 's3', 's4'])
    },
  }),
  defineCase({
    id: 'wakeup.claim-race',
    title: 'workers claiming at once never take the same wakeup',
    requires: ['wakeups', 'races'],
    async run({ store, openStore, clock, concurrency }) {
      const w = wakeupsOf(store)
      const total = concurrency * 3
      for (let i = 0; i < total; i++) await w.schedule(`s${i}`, clock.now() - total + i)
      const workers = await Promise.all(Array.from({ length: concurrency }, () => openStore()))
      const claimed = (await Promise.all(workers.map((s) => wakeupsOf(s).claim(4, 60_000)))).flat()
      const ids = claimed.map((x) => x.logId)
      assert.equal(new Set(ids).size, ids.length, `a wakeup was claimed twice: ${ids.join(',')}`)
      const rest = await w.claim(total, 60_000)
      assert.equal(ids.length + rest.length, total, 'every wakeup is claimed once')
      await Promise.all(workers.map((s) => s.close?.()))
    },
  }),
]
