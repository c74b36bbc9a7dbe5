import assert from 'node:assert/strict'
import { type HarnessStore, type LogEntry, type LogRecord, readAll } from '@tanstack/ai-harness/store'
import { checkPage, defineCase, readFrom } from '../case.js'

/**
 * Batch sizes of the large log: small and large, and around the page sizes stores use
 * internally (25, 100, 256, 1000), so the log's batch boundaries never line up with a
 * reader's page boundaries.
 */
const BATCH_SIZES = [1, 7, 2, 26, 3, 100, 5, 255, 13, 256, 25, 257, 64, 513, 127, 1000]
const PAGE_SIZES = [25, 100, 256, 257, 1000, 1024, 5000]

/** Appends the batches of `sizes` (each cut to the store's maxBatchRecords) and returns the batch boundaries. */
export async function writeLargeLog(store: HarnessStore, logId: string, sizes = BATCH_SIZES, maxBatchRecords = Number.POSITIVE_INFINITY) {
  const boundaries: number[] = []
  let next = 1
  for (const size of sizes) {
    for (let left = size; left > 0; ) {
      const count = Math.min(left, maxBatchRecords)
      const batch: LogRecord[] = Array.from({ length: count }, (_, i) => ({ type: 'test.page', n: next + i }))
      const { nextSeq } = await store.append(logId, next, batch)
      assert.equal(nextSeq, next + count, `an append of ${count} records at seq ${next} returned nextSeq ${nextSeq}, not ${next + count}`)
      next += count
      left -= count
      boundaries.push(next - 1)
    }
  }
  return { total: next - 1, boundaries }
}

function assertWhole(entries: readonly LogEntry[], total: number, what: string): void {
  if (entries.length < total) {
    assert.fail(`${what}: the read ended after ${entries.length} of ${total} entries (an empty page came before the end of the log)`)
  }
  assert.equal(entries.length, total, `${what}: ${entries.length} of ${total} entries`)
  entries.forEach((entry, i) => {
    if (entry.seq !== i + 1 || entry.record.n !== i + 1) {
      assert.fail(`${what}: position ${i} holds seq ${entry.seq} with the record of seq ${String(entry.record.n)}; expected ${i + 1}`)
    }
  })
}

export const logPagingCases = [
  defineCase({
    id: 'log.read.paging-large',
    title:
      'a log of 2654 records in batches of 1 to 1000 reads back whole with no limit, through readAll, in pages of 25, 100, 256, 257, 1000, 1024 and 5000, and in pages of 7 across its first eight batches',
    async run({ store, openStore, limits }) {
      const { total } = await writeLargeLog(store, 's', BATCH_SIZES, limits.maxBatchRecords)
      const reader = await openStore()
      for (const [who, s] of [
        ['the writer', store],
        ['another instance', reader],
      ] as const) {
        assertWhole(await readFrom(s, 's', 0, undefined, `${who}, no limit`), total, `${who}, no limit`)
        assertWhole(await readAll(s, 's'), total, `${who}, readAll`)
      }
      for (const limit of PAGE_SIZES) {
        assertWhole(await readFrom(reader, 's', 0, limit, `pages of ${limit}`), total, `pages of ${limit}`)
      }
      // Small pages over the first 400 entries: they cross eight batch boundaries.
      for (const limit of [7]) {
        const seen: number[] = []
        while (seen.length < 400) {
          const page = await reader.read('s', { after: seen.length, limit })
          checkPage(page, seen.length, limit, `pages of ${limit}`, total - seen.length)
          for (const entry of page) {
            assert.equal(entry.record.n, entry.seq, `the record at seq ${entry.seq}`)
            seen.push(entry.seq)
          }
        }
      }
      assertWhole(await readAll(reader, 's', 100), total, 'readAll in pages of 100')
    },
  }),
  defineCase({
    id: 'log.read.paging-boundaries',
    title:
      'pages of 1 and 2 that start just before, at and after every batch boundary (and every seq where stores cut pages) hold exactly the right entries',
    async run({ store, limits }) {
      const { total, boundaries } = await writeLargeLog(store, 's', BATCH_SIZES, limits.maxBatchRecords)
      // Also the page sizes stores cut at internally, as seqs.
      const starts = new Set<number>()
      for (const b of [...boundaries, 24, 25, 99, 100, 255, 256, 999, 1000, 1023, 1024]) {
        for (const after of [b - 1, b, b + 1]) if (after >= 0 && after <= total) starts.add(after)
      }
      for (const after of [...starts].sort((a, b) => a - b)) {
        for (const limit of [1, 2]) {
          const page = await store.read('s', { after, limit })
          checkPage(page, after, limit, `read after ${after} limit ${limit}`, total - after)
          for (const entry of page) assert.equal(entry.record.n, entry.seq, `the record at seq ${entry.seq}`)
        }
      }
      assert.deepEqual(await store.read('s', { after: total, limit: 5 }), [], 'after the last seq: empty')
      assert.deepEqual(await store.read('s', { after: total }), [], 'after the last seq, no limit: empty')
    },
  }),
]
