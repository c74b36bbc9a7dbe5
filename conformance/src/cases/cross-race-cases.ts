import assert from 'node:assert/strict'
import type { HarnessStore, Lease, LogRecord } from '@tanstack/ai-harness/store'
import { assertSame, type CaseContext, defineCase, expectCode, readLog } from '../case.js'

const TTL = 30_000
const codeOf = (error: unknown) => (error as { code?: unknown })?.code

/** Appends `record` at the log's next seq with `lease`, again after each conflict: until it lands (true) or the lease is lost (false). */
async function appendFenced(store: HarnessStore, logId: string, record: LogRecord, lease: Lease): Promise<boolean> {
  for (let tries = 0; tries < 500; tries++) {
    const next = (await readLog(store, logId)).length + 1
    try {
      await store.append(logId, next, [record], { lease })
      return true
    } catch (error) {
      if (codeOf(error) === 'LEASE_LOST') return false
      if (codeOf(error) !== 'LOG_CONFLICT') throw error
    }
  }
  assert.fail(`${logId}: 500 fenced appends in a row conflicted`)
}

const racers = (context: CaseContext, count: number): Promise<HarnessStore[]> =>
  Promise.all(Array.from({ length: count }, () => context.openRacer()))
const racer = async (context: CaseContext): Promise<HarnessStore> => context.openRacer()

export const crossRaceCases = [
  defineCase({
    id: 'race.fenced-append-takeover',
    title:
      "writers appending with a lease while another host takes the session over: none of the old holder's records lands after the new holder's first, and the old holder's appends end LEASE_LOST",
    requires: ['leases', 'fencing', 'races'],
    async run(context) {
      const { clock, store } = context
      const old = await store.leases!.acquire('s', 'old-host', TTL)
      await store.append('s', 1, [{ type: 'start' }], { lease: old })
      const writers = await racers(context, Math.max(2, Math.min(context.concurrency, 4)))
      const taker = await racer(context)
      let landed = 0
      let finished = 0
      let landedAfterLoss = 0
      let takenOver = false
      // The old writers append four times, then start no new append until the takeover begins,
      // so their appends race the new holder's acquire (and the log stays short).
      let startTakeover = () => {}
      const takeoverBegins = new Promise<void>((resolve) => {
        startTakeover = resolve
      })
      const oldWriters = writers.map(async (writer, w) => {
        for (let n = 0; n < 200; n++) {
          if (landed >= 4) await takeoverBegins
          const after = takenOver
          if (!(await appendFenced(writer, 's', { type: 'old', w, n }, old))) return void finished++
          landed++
          if (after) landedAfterLoss++
          // A turn of the event loop: an in-process driver that answers in microtasks would starve the takeover.
          await new Promise((resolve) => setTimeout(resolve, 0))
        }
        assert.fail(
          "200 appends with the old lease landed while another host took the session over: a fenced append must check the lease in the same atomic step as the seq, against the store's current lease (never a copy an instance keeps)",
        )
      })
      // Awaited below; a failure of the case before that must not leave it unhandled.
      const allOld = Promise.all(oldWriters)
      allOld.catch(() => {})
      for (let waits = 0; landed < 4 && finished < writers.length && waits < 5_000; waits++)
        await new Promise((resolve) => setTimeout(resolve, 1))
      clock.advance(TTL)
      startTakeover()
      const lease = await taker.leases!.acquire('s', 'new-host', TTL)
      takenOver = true
      assert.ok(await appendFenced(taker, 's', { type: 'new' }, lease), "the new holder's append was LEASE_LOST")
      await allOld
      const log = await readLog(store, 's')
      assert.equal(log.filter((r) => r.type === 'new').length, 1, "the new holder's append, read from another instance")
      const firstNew = log.findIndex((r) => r.type === 'new')
      const lateOld = log.slice(firstNew).filter((r) => r.type === 'old')
      assert.equal(
        lateOld.length + landedAfterLoss,
        0,
        `${lateOld.length} records of the old holder landed after the new holder's first record, and ${landedAfterLoss} appends with the old lease that began after the takeover resolved landed: check the append's lease in the same atomic step as its seq, against the lease the store holds now`,
      )
    },
  }),
  defineCase({
    id: 'race.claim-cancel-delete',
    title:
      'claims racing cancels, deletes and new schedules of the same sessions never bring back a cancelled or deleted wakeup, nor overwrite a newer schedule with the hold',
    requires: ['wakeups', 'races'],
    async run(context) {
      const { clock, store } = context
      const now = clock.now()
      const later = now + 86_400_000
      const ids = Array.from({ length: 48 }, (_, i) => `w-${String(i).padStart(2, '0')}`)
      for (const [i, logId] of ids.entries()) {
        await store.append(logId, 1, [{ type: 't' }])
        await store.wakeups!.schedule(logId, now - 100 + i)
      }
      const [a, b, c, d] = await racers(context, 4)
      const claimer = (racer: HarnessStore) => async () => {
        for (let n = 0; n < 60; n++) if ((await racer.wakeups!.claim(2, 60_000)).length === 0) return
      }
      const changer = (racer: HarnessStore, from: number) => async () => {
        for (let i = from; i < ids.length; i += 2) {
          const logId = ids[i]!
          if (i % 3 === 0) await racer.wakeups!.cancel(logId)
          else if (i % 3 === 1) await racer.delete(logId)
          else await racer.wakeups!.schedule(logId, later)
        }
      }
      await Promise.all([claimer(a!)(), claimer(b!)(), changer(c!, 0)(), changer(d!, 1)()])
      clock.advance(120_000)
      const due = await store.wakeups!.due(1000)
      assertSame(
        due.map((w) => w.logId),
        [],
        'due once every claim hold is over: a claim that raced a cancel, a delete or a new schedule wrote its hold back over it. Claim in one atomic step that moves only the wakeups still due (compare the time it read), never a read and a later write',
      )
      clock.set(later)
      assertSame(
        (await store.wakeups!.due(1000)).map(({ logId, at }) => ({ logId, at })),
        ids.filter((_, i) => i % 3 === 2).map((logId) => ({ logId, at: later })),
        'the rescheduled sessions, due at their new time',
      )
    },
  }),
  defineCase({
    id: 'race.renew-release-takeover',
    title:
      "renewals racing a release and another owner's acquire never bring back the released lease: the new holder keeps its lease and the old one's renew is LEASE_LOST",
    requires: ['leases', 'races'],
    async run(context) {
      const { store } = context
      for (let round = 0; round < 16; round++) {
        const logId = `r-${round}`
        const renewer = await racer(context)
        const taker = await racer(context)
        const old = await store.leases!.acquire(logId, 'old-host', TTL)
        let current = old
        const renewing = (async () => {
          for (let n = 0; n < 30; n++) {
            try {
              current = await renewer.leases!.renew(current, TTL)
            } catch (error) {
              if (codeOf(error) === 'LEASE_LOST') return
              throw error
            }
          }
        })()
        renewing.catch(() => {})
        await new Promise((resolve) => setTimeout(resolve, round % 4))
        await store.leases!.release(old).catch((error) => {
          if (codeOf(error) !== 'LEASE_LOST') throw error
        })
        const taken = await taker.leases!.acquire(logId, 'new-host', TTL).catch((error) => {
          if (codeOf(error) !== 'LEASE_HELD') throw error
          assert.fail(
            `${logId}: after the old holder released its lease, another owner's acquire was LEASE_HELD: a renew that raced the release wrote the released lease back. Renew in one atomic step that changes the lease only while it is the caller's`,
          )
        })
        await renewing
        await taker.leases!.renew(taken, TTL).catch((error) => {
          if (codeOf(error) !== 'LEASE_LOST') throw error
          assert.fail(
            `${logId}: the new holder's renew was LEASE_LOST: a renew of the old lease that raced the release and the acquire overwrote the new lease. Renew in one atomic step that changes the lease only while its owner and fence are the caller's`,
          )
        })
        await expectCode(
          store.leases!.acquire(logId, 'third-host', TTL),
          'LEASE_HELD',
          `${logId}: a third owner, while the new holder's lease lives`,
        )
        await renewer.leases!.renew(current, TTL).then(
          () => assert.fail(`${logId}: the old holder's renew succeeded after its release and another owner's acquire`),
          (error) => assert.equal(codeOf(error), 'LEASE_LOST', `${logId}: the old holder's renew`),
        )
      }
    },
  }),
]
