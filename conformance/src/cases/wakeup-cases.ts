import assert from 'node:assert/strict'
import { MAX_TIME_MS, type WakeupStore } from '@tanstack/ai-harness/store'
import { assertSame, defineCase } from '../case.js'
import { LOOK_ALIKE_IDS } from './log-id-cases.js'
import { untilHolds } from './real-time.js'

const wakeupsOf = (store: { wakeups?: WakeupStore }): WakeupStore => {
  assert.ok(store.wakeups, 'the store has no wakeups')
  return store.wakeups
}

/** How long a notification may take to arrive, in real time (it crosses a connection). */
const TOLD_WITHIN_MS = 10_000

/** Until the listener was called as `told()` says, for at most {@link TOLD_WITHIN_MS} of real time. */
const untilTold = (told: () => boolean, what: string) =>
  untilHolds(told, TOLD_WITHIN_MS, `${what}: no call of the watch's listener within ${TOLD_WITHIN_MS} ms`)

export const wakeupCases = [
  defineCase({
    id: 'wakeup.watch',
    title: "watch tells another instance's listener when a wakeup is scheduled due at once; its stop ends the calls",
    requires: ['wakeups', 'watch'],
    async run({ store, clock, openStore }) {
      const watching = wakeupsOf(store)
      const other = wakeupsOf(await openStore())
      let calls = 0
      const stop = await watching.watch!(() => {
        calls++
      })
      try {
        await other.schedule('s', clock.now())
        await untilTold(() => calls > 0, 'a wakeup scheduled due now by another instance')
        const before = calls
        await watching.schedule('t', clock.now() - 1)
        await untilTold(() => calls > before, "a wakeup scheduled due by the watcher's own instance")
      } finally {
        await stop()
      }
      const stopped = calls
      await other.schedule('u', clock.now())
      // Delivery takes a moment: a stopped watch must stay silent past it.
      await new Promise((resolve) => setTimeout(resolve, 200))
      assert.equal(calls, stopped, 'the listener was called after its watch stopped')
    },
  }),
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
      assertSame(
        await w.due(10),
        [
          { logId: 'first', at: now - 20 },
          { logId: 'second', at: now - 10 },
          { logId: 'third', at: now },
        ],
        'the wakeups due, oldest first, each with its time',
      )
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
    id: 'wakeup.claim-original-time',
    title:
      'each claimed wakeup reports the time it was due, not the end of its hold; a wakeup that comes back reports the time its hold ended',
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      const now = clock.now()
      const times = [now - 5000, now - 1234, now - 1, now]
      for (const [i, at] of times.entries()) await w.schedule(`s${i}`, at)
      const claimed = await w.claim(10, 7000)
      assertSame(
        claimed,
        times.map((at, i) => ({ logId: `s${i}`, at })),
        'a claim reports each wakeup with the time it was due',
      )
      clock.advance(7000)
      const again = await w.claim(10, 7000)
      assertSame(
        again,
        times.map((_, i) => ({ logId: `s${i}`, at: now + 7000 })),
        'a claim that came back is due at the end of its first hold',
      )
    },
  }),
  defineCase({
    id: 'wakeup.cancel-exact',
    title: "cancel removes exactly that session's wakeup: cancel('a') leaves 'ab', 'a ', ' a', 'A', 'a/b' and the other look-alikes",
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      const ids = ['a', 'ab', 'a ', ' a', 'A', 'a/b', 'a:', 'a%', 'a\u0301', 'ba', '\u00e0']
      for (const [i, id] of ids.entries()) await w.schedule(id, clock.now() - 100 + i)
      await w.cancel('a')
      assertSame(
        (await w.due(100)).map((x) => x.logId),
        ids.slice(1),
        "after cancel('a'), the wakeups due",
      )
      await w.cancel('a/b')
      await w.cancel('b')
      assertSame(
        (await w.due(100)).map((x) => x.logId),
        ids.filter((id) => id !== 'a' && id !== 'a/b'),
        "after cancel('a/b') and cancel('b'), the wakeups due",
      )
    },
  }),
  defineCase({
    id: 'wakeup.id.exact',
    title: 'wakeups of look-alike ids (spaces, normal forms, case) are separate, and due reports each id exactly as scheduled',
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      const now = clock.now()
      for (const [i, id] of LOOK_ALIKE_IDS.entries()) await w.schedule(id, now - 1000 + i)
      assertSame(
        await w.due(1000),
        LOOK_ALIKE_IDS.map((logId, i) => ({ logId, at: now - 1000 + i })),
        'the wakeups of look-alike ids, each as scheduled',
      )
      await w.cancel(LOOK_ALIKE_IDS[0]!)
      const claimed = await w.claim(1000, 60_000)
      assertSame(
        claimed.map((x) => x.logId),
        LOOK_ALIKE_IDS.slice(1),
        `after cancel(${JSON.stringify(LOOK_ALIKE_IDS[0])}), the wakeups claimed`,
      )
    },
  }),
  defineCase({
    id: 'wakeup.schedule-clears-hold',
    title: "schedule replaces a claimed wakeup: the claim's hold no longer hides it, earlier or later than the hold's end",
    requires: ['wakeups'],
    async run({ store, openStore, clock }) {
      const w = wakeupsOf(store)
      const other = wakeupsOf(await openStore())
      const now = clock.now()
      await w.schedule('early', now - 10)
      await w.schedule('later', now - 10)
      assert.equal((await w.claim(10, 60_000)).length, 2)
      assert.deepEqual(await other.due(10), [], 'claimed wakeups are held')
      await other.schedule('early', now - 5)
      await other.schedule('later', now + 1000)
      assert.deepEqual(await w.due(10), [{ logId: 'early', at: now - 5 }], 'a wakeup scheduled again is due at its new time')
      assertSame(await other.claim(10, 60_000), [{ logId: 'early', at: now - 5 }], 'a claim of the wakeup scheduled again')
      clock.advance(1000)
      assertSame(await w.claim(10, 60_000), [{ logId: 'later', at: now + 1000 }], 'at its new time, with the hold of the first claim gone')
    },
  }),
  defineCase({
    id: 'wakeup.sub-ms',
    title: 'wakeup times may have fractions of a ms: a store keeps them to the ms or better and never reports one before its time',
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      const now = clock.now()
      const plan = [
        ['half', now + 1500.5],
        ['quarter', now + 250.25],
        ['whole', now + 999],
        ['tiny', now + 0.001],
      ] as const
      for (const [id, at] of plan) await w.schedule(id, at)
      for (const [id, at] of [...plan].sort((a, b) => a[1] - b[1])) {
        clock.set(Math.floor(at))
        const early = (await w.due(10)).filter((x) => x.logId === id)
        if (Math.floor(at) < at) assert.deepEqual(early, [], `${id} (at ${at - now} ms) is reported at ${Math.floor(at) - now} ms`)
        clock.set(Math.floor(at) + 1)
        const due = (await w.due(10)).find((x) => x.logId === id)
        assert.ok(due, `${id} (at ${at - now} ms) is not due 1 ms later`)
        assert.ok(due.at >= at && due.at <= Math.floor(at) + 1, `${id} is reported due at ${due.at - now} ms, scheduled at ${at - now} ms`)
      }
    },
  }),
  defineCase({
    id: 'wakeup.time-range',
    title: 'wakeups at time 0 and at MAX_TIME_MS (the end of the JavaScript Date range) are kept and reported exactly',
    requires: ['wakeups'],
    async run({ store, clock }) {
      const w = wakeupsOf(store)
      await w.schedule('epoch', 0)
      await w.schedule('end', MAX_TIME_MS).catch((error: Error) => {
        assert.fail(
          `schedule at MAX_TIME_MS (${MAX_TIME_MS}, the end of the Date range) failed: ${error.message}. Every store keeps times in [0, MAX_TIME_MS].`,
        )
      })
      assert.deepEqual(await w.due(10), [{ logId: 'epoch', at: 0 }])
      clock.set(MAX_TIME_MS - 1)
      assert.deepEqual(
        (await w.due(10)).map((x) => x.logId),
        ['epoch'],
      )
      clock.set(MAX_TIME_MS)
      assert.deepEqual(await w.due(10), [
        { logId: 'epoch', at: 0 },
        { logId: 'end', at: MAX_TIME_MS },
      ])
    },
  }),
  defineCase({
    id: 'wakeup.claim-race',
    title: 'workers claiming at once never take the same wakeup',
    requires: ['wakeups', 'races'],
    async run({ store, openRacer, clock, concurrency }) {
      const w = wakeupsOf(store)
      const workers = await Promise.all(Array.from({ length: concurrency }, () => openRacer()))
      for (let round = 0; round < 2; round++) {
        const total = concurrency * 3
        for (let i = 0; i < total; i++) await w.schedule(`r${round}s${i}`, clock.now() - total + i)
        const claimed = (await Promise.all(workers.map((s) => wakeupsOf(s).claim(4, 60_000)))).flat()
        const ids = claimed.map((x) => x.logId)
        assert.ok(
          ids.length > 0,
          `round ${round}: the racing workers claimed none of ${total} due wakeups: do their instances see what another instance scheduled?`,
        )
        assert.equal(new Set(ids).size, ids.length, `round ${round}: a wakeup was claimed twice: ${ids.join(',')}`)
        const rest = await w.claim(total, 60_000)
        assert.equal(ids.length + rest.length, total, `round ${round}: every wakeup is claimed once`)
      }
      await Promise.all(workers.map((s) => s.close?.()))
    },
  }),
]
