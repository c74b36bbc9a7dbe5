import assert from 'node:assert/strict'
import type { HarnessStore, LogRecord } from '@tanstack/ai-harness/store'
import { checkPage, defineCase, expectCode, readFrom, records } from '../case.js'

/** Appends `count` small records to `logId` in batches the store takes. */
async function fill(store: HarnessStore, logId: string, count: number, perBatch: number): Promise<void> {
  for (let seq = 1; seq <= count; seq += perBatch) {
    const n = Math.min(perBatch, count - seq + 1)
    await store.append(logId, seq, records(n, `b${seq}`) as LogRecord[])
  }
}

const TTL = 30_000
/** The largest read page the runtime asks for (it grows its pages from 1,000 to 8,000 entries while it folds a long session). */
const OPEN_PAGE_MOST = 8_000

export const runtimeParameterCases = [
  defineCase({
    id: 'log.read.runtime-pages',
    title: `pages as large as the runtime asks (up to ${OPEN_PAGE_MOST} entries) are dense and reach the end of a log longer than one of them`,
    async run({ store, limits }) {
      const count = OPEN_PAGE_MOST + 321
      await fill(store, 'long', count, Math.min(limits.maxBatchRecords ?? 1_000, 1_000))
      for (const limit of [OPEN_PAGE_MOST, OPEN_PAGE_MOST / 2, OPEN_PAGE_MOST - 1]) {
        const page = await store.read('long', { after: 0, limit })
        checkPage(page, 0, limit, `a read of limit ${limit}`, count)
        const all = await readFrom(store, 'long', 0, limit, `the log read in pages of ${limit}`)
        assert.equal(
          all.length,
          count,
          `the log of ${count} entries read in pages of ${limit} gave ${all.length}: a page as large as the runtime asks must not end the log or lose entries (cap pages if you must, never end early)`,
        )
      }
      const tail = await readFrom(store, 'long', count - 5, OPEN_PAGE_MOST)
      assert.deepEqual(
        tail.map((e) => e.seq),
        [count - 4, count - 3, count - 2, count - 1, count],
        'the last page',
      )
    },
  }),
  defineCase({
    id: 'lease.fences.long-sequence',
    title: 'fences keep growing over 130 leases of one session, taken after release, expiry, delete and takeover in turn',
    requires: ['leases'],
    async run({ store, openStore, clock }) {
      const other = await openStore()
      let last = 0
      for (let n = 0; n < 130; n++) {
        const from = n % 2 === 0 ? store : other
        const lease = await from.leases!.acquire('s', `owner-${n % 3}`, TTL)
        assert.ok(
          lease.fence > last,
          `lease ${n + 1} of the session has fence ${lease.fence}, not above ${last}: fences grow without end (a whole number up to Number.MAX_SAFE_INTEGER, never a byte, never compared as text, never restarted after a release, expiry or delete)`,
        )
        last = lease.fence
        switch (n % 4) {
          case 0:
            await from.leases!.release(lease)
            break
          case 1:
            clock.advance(TTL)
            break
          case 2:
            await store.append('s', 1, [{ type: 't', n }])
            await from.delete('s')
            break
          default:
            break // the next acquire is by another owner, after expiry below
        }
        if (n % 4 === 3) clock.advance(TTL)
      }
    },
  }),
  defineCase({
    id: 'store.limit-zero',
    title: 'a limit of 0 returns nothing and changes nothing on read, due and claim; listings refuse it with INVALID_ARGUMENT',
    async run({ store, clock }) {
      await store.append('s', 1, records(3, 'z'))
      assert.deepEqual(await store.read('s', { limit: 0 }), [], 'read with limit 0')
      assert.deepEqual(await store.read('s', { after: 1, limit: 0 }), [], 'read after 1 with limit 0')
      if (store.wakeups) {
        await store.wakeups.schedule('s', clock.now() - 1)
        assert.deepEqual(await store.wakeups.due(0), [], 'due(0)')
        assert.deepEqual(await store.wakeups.claim(0, 60_000), [], 'claim(0): a claim of nothing')
        assert.deepEqual(
          (await store.wakeups.due(10)).map((w) => w.logId),
          ['s'],
          'claim(0) took the wakeup anyway (a limit of 0 is none, not "no limit")',
        )
      }
      if (store.sessions) {
        await expectCode(store.sessions.list({ limit: 0 }), 'INVALID_ARGUMENT', 'sessions.list({ limit: 0 })')
        await expectCode(store.sessions.waiting({ limit: 0 }), 'INVALID_ARGUMENT', 'sessions.waiting({ limit: 0 })')
      }
    },
  }),
  defineCase({
    id: 'store.close.twice',
    title: 'close() twice resolves both times (a host and its app may both close the store)',
    async run({ openStore }) {
      const store = await openStore()
      await store.append('s', 1, records(1, 'c'))
      await store.close?.()
      await store.close?.()
    },
  }),
]
