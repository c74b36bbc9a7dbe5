import assert from 'node:assert/strict'
import { readAll } from '@tanstack/ai-harness/store'
import { defineCase } from '../case.js'
import { witnessedSection, witnessProblems } from './lock-witness.js'
import { locksOn, until, within } from './stream-kit.js'

const TTL = 10_000
/** A holder that never renews: it acts as one whose process died. */
const DEAD = 2_000_000_000
/** A promise awaited later in the case: its rejection is the case's failure then, never an unhandled rejection now. */
const later = <T>(promise: Promise<T>): Promise<T> => {
  promise.catch(() => {})
  return promise
}
const roundTrip = () => new Promise<void>((resolve) => setTimeout(resolve, 2))

/** The `lock.*` cases: TanStack AI's `LockStore` on the store's leases. */
export const lockCases = [
  defineCase({
    id: 'lock.exclusive',
    title:
      'withLock is exclusive across instances and, when the run has them, across processes that each run their own locks: no two critical sections of a key overlap',
    requires: ['leases'],
    async run(context) {
      const lockers = await Promise.all(
        Array.from({ length: context.concurrency }, async () => locksOn(context, await context.openRacer())),
      )
      // The store's own seqs witness the sections of every process (see witnessedSection).
      const witness = `lock-witness-${Math.random().toString(36).slice(2, 10)}`
      const processes = (await Promise.all([1, 2].map(() => context.openRacerProcess()))).filter((p) => p !== undefined)
      let inside = 0
      let overlaps = 0
      let runs = 0
      const other = later(locksOn(context).withLock('other-key', async () => 'free'))
      const here = lockers.flatMap((locks, l) =>
        [1, 2].map((n) =>
          locks.withLock('key', async () => {
            inside++
            if (inside > 1) overlaps++
            await witnessedSection(context.store, witness, `here.${l + 1}.${n}`, 2)
            inside--
            runs++
          }),
        ),
      )
      const there = processes.map((p, i) => p.lockSections({ key: 'key', witness, who: `process${i + 1}`, sections: 3, holdMs: 2 }))
      // Generous: on a slow store (files, another process per racer) the waiters' backoff reaches 500 ms under load.
      await within(Promise.all([...here, ...there]), 'every locker ran its critical sections (a released lock is free at once)', 45_000)
      assert.equal(overlaps, 0, `${overlaps} critical sections ran while another held the lock`)
      assert.equal(runs, context.concurrency * 2)
      const sections = context.concurrency * 2 + processes.length * 3
      const problems = witnessProblems(await readAll(context.store, witness), sections)
      assert.deepEqual(problems, [], 'the witness log shows overlapping critical sections')
      assert.equal(await within(other, 'another key'), 'free', 'another key is not locked')
    },
  }),
  defineCase({
    id: 'lock.result',
    title: "withLock returns fn's result and passes its rejection on, and frees the lock either way",
    requires: ['leases'],
    async run(context) {
      const locks = locksOn(context)
      assert.equal(
        await within(
          locks.withLock('k', async () => 42),
          'a free lock',
        ),
        42,
      )
      await assert.rejects(
        within(
          locks.withLock('k', async () => {
            throw new Error('boom')
          }),
          'the lock after a result',
        ),
        /boom/,
      )
      const next = locksOn(context, await context.openStore())
      assert.equal(
        await within(
          next.withLock('k', async () => 'after'),
          'the lock is free after a rejection',
        ),
        'after',
      )
    },
  }),
  defineCase({
    id: 'lock.expiry',
    title: 'a lock whose holder died (stopped renewing) is taken by a waiter once its lease expires, by the injected clock',
    requires: ['leases'],
    async run(context) {
      const dead = locksOn(context, context.store, { ttlMs: TTL, renewEveryMs: DEAD })
      let held!: () => void
      const holding = new Promise<void>((resolve) => {
        held = resolve
      })
      // It never ends: its process is as good as dead.
      later(
        dead.withLock('k', () => {
          held()
          return new Promise<void>(() => {})
        }),
      )
      await within(holding, 'the first holder got the lock')
      let waiterRan = false
      const waiter = later(
        locksOn(context, await context.openStore()).withLock('k', async () => {
          waiterRan = true
        }),
      )
      await roundTrip()
      await roundTrip()
      assert.equal(waiterRan, false, 'a waiter ran while the lock was held')
      context.clock.advance(TTL)
      await within(waiter, 'the waiter takes the lock once the dead holder’s lease expired')
      assert.ok(waiterRan)
    },
  }),
  defineCase({
    id: 'lock.fenced',
    title: 'each holder of a key sees a strictly greater fence; a holder that lost its lock cannot free its successor',
    requires: ['leases'],
    async run(context) {
      const fences: number[] = []
      for (let i = 0; i < 3; i++) {
        const locks = locksOn(context, await context.openStore())
        await within(
          locks.withLease('k', async ({ fence }) => void fences.push(fence)),
          `holder ${i + 1} (a released lock is free at once)`,
        )
      }
      for (let i = 1; i < fences.length; i++) assert.ok(fences[i]! > fences[i - 1]!, `fences ${JSON.stringify(fences)} do not grow`)
      const stale = locksOn(context, context.store, { ttlMs: TTL, renewEveryMs: DEAD })
      let release!: () => void
      let staleHeld!: () => void
      const gotStale = new Promise<void>((resolve) => {
        staleHeld = resolve
      })
      const staleRun = later(
        stale.withLease('k', () => {
          staleHeld()
          return new Promise<void>((resolve) => {
            release = resolve
          })
        }),
      )
      await within(gotStale, 'the stale holder got the lock')
      context.clock.advance(TTL)
      let successorDone!: () => void
      let successorFence = 0
      const successorHolds = new Promise<void>((resolve) => {
        successorDone = resolve
      })
      const successor = later(
        locksOn(context, await context.openStore(), { ttlMs: TTL * 100 }).withLease('k', async ({ fence }) => {
          successorFence = fence
          await successorHolds
        }),
      )
      await until(() => successorFence > 0, 'the successor took the expired lock')
      assert.ok(successorFence > fences.at(-1)!, 'the successor has the greatest fence')
      release()
      await within(
        staleRun.catch(() => {}),
        'the stale holder ends',
      )
      let thirdRan = false
      const third = later(
        locksOn(context, await context.openStore()).withLock('k', async () => {
          thirdRan = true
        }),
      )
      await roundTrip()
      await roundTrip()
      assert.equal(thirdRan, false, "the stale holder's end freed its successor's lock")
      successorDone()
      await within(Promise.all([successor, third]), 'the successor and then the third holder finish')
    },
  }),
  defineCase({
    id: 'lock.renews',
    title: 'a holder that outlives the ttl keeps the lock by renewing it: no waiter gets it, its signal stays quiet',
    requires: ['leases'],
    async run(context) {
      const locks = locksOn(context, context.store, { ttlMs: TTL, renewEveryMs: 2 })
      let finish!: () => void
      let signal: AbortSignal | undefined
      const holder = later(
        locks.withLock('k', (s) => {
          signal = s
          return new Promise<void>((resolve) => {
            finish = resolve
          })
        }),
      )
      await until(() => signal !== undefined, 'the holder got the lock')
      let waiterRan = false
      const waiter = later(
        locksOn(context, await context.openStore()).withLock('k', async () => {
          waiterRan = true
        }),
      )
      for (let i = 0; i < 4; i++) {
        context.clock.advance(TTL / 2)
        // Real time for a few renewals at the new time.
        for (let j = 0; j < 5; j++) await roundTrip()
        assert.equal(signal!.aborted, false, `the signal aborted after ${(i + 1) * (TTL / 2)} ms of a renewed lock`)
      }
      assert.equal(waiterRan, false, 'a waiter got a lock its holder kept renewing')
      finish()
      await within(Promise.all([holder, waiter]), 'the waiter gets the lock once the holder is done')
      assert.ok(waiterRan)
    },
  }),
  defineCase({
    id: 'lock.signal',
    title: "the holder's signal aborts as soon as its lock is lost (expired and taken over)",
    requires: ['leases'],
    async run(context) {
      const locks = locksOn(context, context.store, { ttlMs: TTL, renewEveryMs: 5 })
      let signal: AbortSignal | undefined
      const holder = later(
        locks.withLock('k', (s) => {
          signal = s
          return new Promise<void>((resolve) => s.addEventListener('abort', () => resolve(), { once: true }))
        }),
      )
      await until(() => signal !== undefined, 'the holder got the lock')
      await roundTrip()
      assert.equal(signal!.aborted, false, 'the signal aborted while the lock was held and renewed')
      context.clock.advance(TTL * 2)
      const taker = later(locksOn(context, await context.openStore()).withLock('k', async () => 'taken'))
      await within(
        until(() => signal!.aborted, 'the holder’s signal aborted after its lock was taken', 4_000),
        'the abort',
      )
      assert.equal(await within(taker, 'the new holder runs'), 'taken')
      await within(holder, 'the old holder ends once its signal aborted')
    },
  }),
]
