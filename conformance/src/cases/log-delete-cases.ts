import assert from 'node:assert/strict'
import type { HarnessStore, LogRecord, StoreLimits } from '@tanstack/ai-harness/store'
import { defineCase, expectCode, readFrom, readLog } from '../case.js'

const OLD_MARKER = 'deleted-log-marker-c41d'

/**
 * A log of about 2000 records in 170 batches and over 1 MiB (a few large records among
 * small ones), written by two instances: more items than one page of any store's
 * internal listing (25, 100, 1000 items, 1 MB).
 */
async function writeBigLog(writers: readonly HarnessStore[], limits: StoreLimits, first = 1, batches = 170): Promise<number> {
  const large = Math.min(limits.maxRecordBytes, limits.maxBatchBytes) - 200
  const largeCount = Math.ceil((1.1 * 1024 * 1024) / large)
  let next = first
  for (let b = 0; b < batches; b++) {
    const size = 1 + ((b * 7) % 23)
    const batch: LogRecord[] = Array.from({ length: size }, (_, i) => ({ type: 'test.old', marker: OLD_MARKER, b, i }))
    if (b % Math.floor(batches / largeCount) === 0)
      batch.splice(0, batch.length, { type: 'test.old', marker: OLD_MARKER, b, i: 0, pad: 'o'.repeat(large) })
    const { nextSeq } = await writers[b % writers.length]!.append('s', next, batch)
    assert.equal(nextSeq, next + batch.length, `an append of ${batch.length} records at seq ${next} returned nextSeq ${nextSeq}`)
    next = nextSeq
  }
  return next
}

export const logDeleteCases = [
  defineCase({
    id: 'log.delete.large',
    title:
      'deleting a log of 170 batches and over 1 MiB from one of five instances empties it for all, warm caches included: old seqs conflict everywhere, and the id starts again at 1 with only new records',
    async run({ store, openStore, limits }) {
      const instances = [store, ...(await Promise.all([openStore(), openStore(), openStore(), openStore()]))]
      const [a, b, c, d, early] = instances as [HarnessStore, HarnessStore, HarnessStore, HarnessStore, HarnessStore]
      // One instance writes the first batches and then never looks again: it knows an early
      // end of the log, as a host that lost its lease long ago would.
      await early.append('s', 1, [{ type: 'test.old', marker: OLD_MARKER }])
      const earlyNext = (await early.append('s', 2, [{ type: 'test.old', marker: OLD_MARKER }])).nextSeq
      const oldNext = await writeBigLog([a, b], limits, earlyNext)
      // Warm every cache an instance may keep: full reads, pages, tails.
      for (const instance of [a, b, c, d]) {
        const read = (await readFrom(instance, 's')).length
        assert.equal(read, oldNext - 1, `reading the log of ${oldNext - 1} records page by page ended after ${read}`)
        await instance.read('s', { after: oldNext - 3, limit: 10 })
        await instance.read('s', { after: 500, limit: 10 })
      }
      await c.delete('s')
      // Each instance meets the deleted log with its caches warm; some append first (a cache
      // that a read would refresh is still stale), some read first.
      const staleAppends = async (i: number, instance: HarnessStore, cached: number) => {
        for (const seq of [cached, oldNext, oldNext - 1, earlyNext, 2]) {
          const what = seq === earlyNext && instance === early ? 'the instance that knew an early end of the log' : `instance ${i}`
          await expectCode(
            instance.append('s', seq, [{ type: 'test.stale', i, seq }]),
            'LOG_CONFLICT',
            `${what}, appending at ${seq} after the delete`,
          )
        }
      }
      const emptyReads = async (i: number, instance: HarnessStore) => {
        for (const [what, options] of [
          ['the deleted log', {}],
          ['a page of the deleted log (after 500)', { after: 500, limit: 10 }],
          [`the tail of the deleted log (after ${oldNext - 3})`, { after: oldNext - 3, limit: 10 }],
        ] as const) {
          const left = await instance.read('s', options)
          assert.equal(left.length, 0, `instance ${i} still reads ${left.length} entries of ${what}, from seq ${left[0]?.seq}`)
        }
      }
      for (const [i, instance] of instances.entries()) {
        const appendsFirst = instance === a || instance === c || instance === early
        if (appendsFirst) await staleAppends(i, instance, instance === early ? earlyNext : oldNext)
        await emptyReads(i, instance)
        if (!appendsFirst) await staleAppends(i, instance, oldNext)
      }
      for (const instance of instances) assert.deepEqual(await readLog(instance, 's'), [], 'a stale append after the delete landed')
      // The id starts over at 1, from an instance that knew the old log.
      const fresh: LogRecord[] = [
        { type: 'test.new', n: 1 },
        { type: 'test.new', n: 2 },
      ]
      assert.equal((await a.append('s', 1, fresh)).nextSeq, 3)
      assert.equal((await b.append('s', 3, [{ type: 'test.new', n: 3 }])).nextSeq, 4)
      const expected = [...fresh, { type: 'test.new', n: 3 }]
      for (const [i, instance] of instances.entries()) {
        assert.deepEqual(await readLog(instance, 's'), expected, `instance ${i} reads the new log`)
        assert.deepEqual(await instance.read('s', { after: 3, limit: 100 }), [], `instance ${i} reads past the new log's end`)
        assert.deepEqual(await instance.read('s', { after: 500, limit: 10 }), [], `instance ${i} reads where the old log was`)
      }
      await expectCode(d.append('s', oldNext, [{ type: 'test.stale' }]), 'LOG_CONFLICT', 'the old next seq on the new log')
      assert.equal((await d.append('s', 4, [{ type: 'test.new', n: 4 }])).nextSeq, 5)
      assert.equal((await readLog(c, 's')).length, 4)
    },
  }),
  defineCase({
    id: 'log.delete.no-trace',
    title: 'a deleted log of 40 batches and over 1 MiB leaves none of its records in the raw store',
    requires: ['dump'],
    async run({ store, openStore, limits, dump }) {
      await writeBigLog([store, await openStore()], limits, 1, 40)
      await store.append('kept', 1, [{ type: 'test.kept' }])
      assert.ok((await dump()).includes(OLD_MARKER), 'the dump shows the records before the delete')
      await store.delete('s')
      const raw = await dump()
      assert.ok(!raw.includes(OLD_MARKER), 'the dump still holds records of the deleted log')
      assert.deepEqual(await readLog(store, 'kept'), [{ type: 'test.kept' }])
    },
  }),
]
