import assert from 'node:assert/strict'
import type { CaseContext } from '../case.js'
import type { HarnessStore, LogRecord } from '@tanstack/ai-harness/store'
import { assertSame, defineCase, expectCode, readFrom, readLog } from '../case.js'

// Delete holds for a session live on several instances: once `delete` resolves, no
// instance, whatever its caches hold, reads or writes one record of the old log again, and
// a new log of the id starts clean at seq 1.

const OLD = 'old-log-marker-7e2a'
const STALE = 'stale-write-marker-7e2a'
const NEW = 'new-log-marker-7e2a'
const rec = (n: number, marker = OLD): LogRecord => ({ type: 'test.delete', n, marker })
const seqsOf = async (store: HarnessStore, options: { after?: number; limit?: number }) =>
  (await store.read('s', options)).map((e) => e.seq)

/** Appends at each seq from each instance after the delete: every one must conflict. */
async function staleAppendsConflict(instances: Record<string, HarnessStore>, seqs: readonly number[]): Promise<void> {
  for (const [name, store] of Object.entries(instances)) {
    for (const seq of seqs) {
      await expectCode(store.append('s', seq, [rec(seq, STALE)]), 'LOG_CONFLICT', `instance ${name}, appending at ${seq} after the delete`)
    }
  }
}

/**
 * Writers that append back to back, each at its own idea of the tail, while one instance
 * deletes the log once they have landed a few batches. Resolves with what a read right
 * after the delete saw, once every writer has stopped.
 */
async function deleteAmidWriters({ store, openRacer, concurrency }: CaseContext): Promise<{ readAfterDelete: number[] }> {
  const writers = await Promise.all(Array.from({ length: Math.min(concurrency, 4) }, () => openRacer()))
  await store.append('s', 1, [rec(1)])
  let landed = 0
  let stop = false
  let going!: () => void
  const underWay = new Promise<void>((resolve) => {
    going = resolve
  })
  const loops = writers.map(async (writer, i) => {
    let next = (await readFrom(writer, 's')).length + 1
    while (!stop) {
      try {
        next = (await writer.append('s', next, [{ type: 'test.racer', marker: STALE, i, next }])).nextSeq
        if (++landed === 4 * writers.length) going()
      } catch (error) {
        if ((error as { code?: string }).code !== 'LOG_CONFLICT') throw error
        // Only a conflict makes a writer read on from what it knew. Nothing at the seq it
        // expected means the log was deleted: a writer of the old log stops, as the harness does.
        const ahead = (await readFrom(writer, 's', next - 1)).length
        if (ahead === 0) return
        next += ahead
      }
    }
  })
  let readAfterDelete: number[] = []
  try {
    await Promise.race([underWay, Promise.all(loops)])
    // The writers' appends must reach the log the deleter sees, or nothing raced the delete.
    // One page past the writers' first appends: not empty while the log holds more (the paging rule).
    const past = await store.read('s', { after: writers.length, limit: 1 })
    assert.ok(
      past.length > 0,
      `the deleter's instance reads no record after seq ${writers.length} once the writers landed ${landed} appends`,
    )
    await store.delete('s')
    readAfterDelete = await seqsOf(store, {})
  } finally {
    stop = true
    going()
    await Promise.all(loops)
  }
  return { readAfterDelete }
}

export const logDeleteLiveCases = [
  defineCase({
    id: 'log.delete.warm-caches',
    title:
      'after a delete, instances whose caches hold a tail, the end of a batch or a page fetched ahead read nothing of the log and conflict at every seq above 1, appending first or reading first; the new log starts at 1 for all',
    async run({ store: a, openStore }) {
      const [b, c, d, e, deleter] = await Promise.all([openStore(), openStore(), openStore(), openStore(), openStore()])
      await a.append('s', 1, [rec(1), rec(2)])
      await a.append('s', 3, [rec(3)])
      assert.equal((await b.read('s')).length, 3, 'b reads the log') // b's tail: 4
      await c.append('s', 4, [rec(4), rec(5)]) // c's tail: 6 (a's and b's are stale at 4)
      assertSame(await seqsOf(d, { after: 1, limit: 1 }), [2], 'd reads the end of the first batch')
      // e pages through in twos: it holds seq 3 and has fetched ahead into the batch 4-5.
      assertSame(await seqsOf(e, { limit: 2 }), [1, 2], 'e reads the first page')
      assertSame(await seqsOf(e, { after: 2, limit: 2 }), [3, 4], 'e reads the second page')

      await deleter.delete('s')
      for (const [what, options] of [
        ['the page after 4 (fetched ahead before the delete)', { after: 4, limit: 4 }],
        ['the rest of the log after 4', { after: 4 }],
        ['the page after 1', { after: 1, limit: 1 }],
      ] as const) {
        assertSame(await seqsOf(e, options), [], `e reads ${what} of the deleted log`)
      }
      // First each instance at the tail its cache holds (a conflict or a read would refresh it)...
      await staleAppendsConflict({ a }, [4])
      await staleAppendsConflict({ b }, [4])
      await staleAppendsConflict({ c }, [6])
      await staleAppendsConflict({ d }, [3])
      // ...then every instance at every seq it could know, and past them, and reading.
      const all = { a, b, c, d, e, deleter }
      await staleAppendsConflict(all, [2, 3, 4, 5, 6, 7])
      for (const [name, store] of Object.entries(all)) {
        assertSame(await seqsOf(store, {}), [], `instance ${name} reads the deleted log`)
        assertSame(await seqsOf(store, { after: 2 }), [], `instance ${name} reads the deleted log after 2`)
      }
      // A new log of the id starts at 1, from an instance whose cache knew the old one.
      await b.append('s', 1, [rec(1, NEW)])
      for (const [name, store] of Object.entries(all))
        assertSame(await readLog(store, 's'), [rec(1, NEW)], `instance ${name} reads the new log`)
      await expectCode(c.append('s', 6, [rec(6, STALE)]), 'LOG_CONFLICT', "c appending at the old log's tail on the new log")
      assertSame(await readLog(deleter, 's'), [rec(1, NEW)], 'the new log after a stale append')
    },
  }),
  defineCase({
    id: 'log.delete.fresh-instance',
    title:
      'an instance opened after a delete conflicts at old seqs and starts the new log at 1; a second delete closes both logs to instances that knew either',
    async run({ store: writer, openStore }) {
      const deleter = await openStore()
      for (let seq = 1; seq <= 5; seq++) await writer.append('s', seq, [rec(seq)])
      await deleter.delete('s')
      const fresh = await openStore()
      await staleAppendsConflict({ fresh }, [6, 3])
      assertSame(await fresh.append('s', 1, [rec(1, NEW), rec(2, NEW)]), { nextSeq: 3 }, 'the new log’s first append')
      assertSame(await fresh.append('s', 3, [rec(3, NEW)]), { nextSeq: 4 }, 'the new log’s second append')
      const other = await openStore()
      assertSame(
        (await other.read('s', { after: 1 })).map((e) => [e.seq, e.record.marker]),
        [
          [2, NEW],
          [3, NEW],
        ],
        'another instance reads the new log after 1',
      )
      assertSame(await readLog(writer, 's'), [rec(1, NEW), rec(2, NEW), rec(3, NEW)], 'the old writer reads the new log')
      // Deleted twice: the old writer knows the first log's tail, fresh the second's.
      await other.delete('s')
      await staleAppendsConflict({ writer, fresh }, [4, 2, 3, 6])
      for (const [name, store] of Object.entries({ writer, fresh, other }))
        assertSame(await readLog(store, 's'), [], `instance ${name} after the second delete`)
    },
  }),
  defineCase({
    id: 'log.delete.stale-writes-no-trace',
    title:
      'stale appends after a delete leave not one byte in the raw store, nor does deleting a log that never existed; a second delete leaves nothing of either log',
    requires: ['dump'],
    async run({ store: a, openStore, dump }) {
      const [b, deleter] = await Promise.all([openStore(), openStore()])
      await a.append('s', 1, [rec(1), rec(2)])
      await b.append('s', 3, [rec(3)])
      assert.equal((await a.read('s', { after: 2 })).length, 1, 'a reads the tail')
      await deleter.delete('s')
      const afterDelete = await dump()
      await staleAppendsConflict({ a, b, deleter }, [4, 3, 2])
      assert.equal(await dump(), afterDelete, 'the raw store changed after appends that conflicted')
      await deleter.delete('never')
      await a.delete('never')
      assert.equal(await dump(), afterDelete, 'the raw store changed after deleting a log that never existed')
      await b.append('s', 1, [rec(1, NEW)])
      await a.delete('s')
      await staleAppendsConflict({ b }, [2])
      const raw = await dump()
      for (const marker of [OLD, STALE, NEW]) assert.ok(!raw.includes(marker), `the raw store still holds ${marker} after two deletes`)
    },
  }),
  defineCase({
    id: 'log.delete.racing-writers',
    title:
      'a delete while writers in other instances append back to back resolves, and leaves the log empty: no append that raced it survives',
    requires: ['races'],
    async run(context) {
      const { readAfterDelete } = await deleteAmidWriters(context)
      assertSame(readAfterDelete, [], 'the seqs a read right after the delete returned')
      assertSame(await seqsOf(context.store, {}), [], 'the log once every writer stopped')
      assertSame(await seqsOf(await context.openStore(), { after: 1 }), [], 'the log, from a fresh instance')
    },
  }),
  defineCase({
    id: 'log.delete.racing-writers-no-trace',
    title: 'a delete while writers in other instances append back to back leaves no byte of any batch in the raw store',
    requires: ['races', 'dump'],
    async run(context) {
      await deleteAmidWriters(context)
      const raw = await context.dump()
      assert.ok(!raw.includes(STALE), 'the raw store still holds batches appended while the delete ran')
      assert.ok(!raw.includes(OLD), 'the raw store still holds the first batch of the deleted log')
    },
  }),
  defineCase({
    id: 'log.delete.concurrent',
    title:
      'two deletes of one log at once both resolve; the log stays closed to a writer whose cache knows its tail, and starts again at 1',
    async run({ store: a, openStore }) {
      const [b, c] = await Promise.all([openStore(), openStore()])
      await a.append('s', 1, [rec(1)])
      await a.append('s', 2, [rec(2)])
      await Promise.all([b.delete('s'), c.delete('s')])
      // a's cache holds the tail, 3: that one first.
      await staleAppendsConflict({ a }, [3, 2])
      assertSame(await readLog(a, 's'), [], 'the log after two deletes')
      await a.append('s', 1, [rec(1, NEW)])
      assertSame(await readLog(b, 's'), [rec(1, NEW)], 'the new log, from one of the deleters')
    },
  }),
]
