import assert from 'node:assert/strict'
import { type HarnessStore, type LogConflictError, type LogRecord, utf8Length } from '@tanstack/ai-harness/store'
import { appendToNewLog, assertSame, checkPage, defineCase, expectCode, readFrom, readLog, records } from '../case.js'
import { sizedBatch, sizedRecord } from '../sized-records.js'

const conflictSeq = (error: unknown) => (error as LogConflictError).actualNextSeq

export const logCases = [
  defineCase({
    id: 'log.append.first-batch',
    title: 'an append to an empty log at seq 1 lands whole, dense from 1, and returns the next seq',
    async run({ store }) {
      const batch = records(3, 'first')
      const result = await store.append('s', 1, batch)
      assert.equal(result.nextSeq, 4)
      const entries = await readFrom(store, 's')
      assert.deepEqual(
        entries.map((e) => e.seq),
        [1, 2, 3],
      )
      assert.deepEqual(
        entries.map((e) => e.record),
        batch,
      )
    },
  }),
  defineCase({
    id: 'log.append.stale',
    title: 'an append at a seq that is already taken fails with LOG_CONFLICT and writes nothing',
    async run({ store }) {
      await store.append('s', 1, records(2, 'a'))
      const error = await expectCode(store.append('s', 1, records(1, 'late')), 'LOG_CONFLICT', 'stale append')
      const actual = conflictSeq(error)
      if (actual !== undefined) assert.equal(actual, 3, 'actualNextSeq, when given, is the real next free seq')
      assert.deepEqual(await readLog(store, 's'), records(2, 'a'))
    },
  }),
  defineCase({
    id: 'log.append.stale-inside-batch',
    title: 'an append expecting a seq inside an earlier batch (6 when one batch holds 5-7) conflicts',
    async run({ store }) {
      await store.append('s', 1, records(4, 'one'))
      await store.append('s', 5, records(3, 'two'))
      await expectCode(store.append('s', 6, records(1, 'inside')), 'LOG_CONFLICT', 'append at 6 inside batch 5-7')
      await expectCode(store.append('s', 7, records(2, 'inside')), 'LOG_CONFLICT', 'append at 7 inside batch 5-7')
      await store.append('s', 8, records(1, 'three'))
      assert.deepEqual(await readLog(store, 's'), [...records(4, 'one'), ...records(3, 'two'), ...records(1, 'three')])
    },
  }),
  defineCase({
    id: 'log.append.future',
    title: 'an append past the next free seq conflicts and leaves no gap',
    async run({ store }) {
      await expectCode(store.append('s', 3, records(1, 'future')), 'LOG_CONFLICT', 'append at 3 on an empty log')
      assert.deepEqual(await store.read('s'), [])
      await store.append('s', 1, records(1, 'a'))
      await expectCode(store.append('s', 3, records(1, 'future')), 'LOG_CONFLICT', 'append at 3 when next is 2')
      assertSame(await readLog(store, 's'), records(1, 'a'), 'the log after a refused append')
    },
  }),
  defineCase({
    id: 'log.append.retry-landed',
    title: 'a retried append of a batch that landed fails as a conflict and never lands twice',
    async run({ store, openStore }) {
      const batch = records(2, 'once')
      await store.append('s', 1, batch)
      await expectCode(store.append('s', 1, batch), 'LOG_CONFLICT', 'retry on the same instance')
      const other = await openStore()
      await expectCode(other.append('s', 1, batch), 'LOG_CONFLICT', 'retry from another instance')
      assert.deepEqual(await readLog(store, 's'), batch)
    },
  }),
  defineCase({
    id: 'log.append.empty-batch',
    title: 'an empty batch writes nothing',
    async run({ store }) {
      await store.append('s', 1, [])
      assert.deepEqual(await store.read('s'), [])
      await store.append('s', 1, records(1, 'a'))
      await store.append('s', 2, [])
      assert.deepEqual(await readLog(store, 's'), records(1, 'a'))
    },
  }),
  defineCase({
    id: 'log.atomic.refused-batch',
    title: 'a batch with one bad record is refused whole, before anything is written, and leaves no trace',
    requires: ['dump'],
    async run({ store, dump }) {
      await store.append('s', 1, records(1, 'before'))
      const marker = 'refused-marker-7f3a9c'
      const tooBig = 'x'.repeat(store.limits.maxRecordBytes + 1)
      const bad: Array<[string, LogRecord[], string]> = [
        ['not JSON', [{ type: 't', note: marker }, { type: 't', n: Number.NaN } as unknown as LogRecord], 'RECORD_NOT_JSON'],
        ['no type', [{ type: 't', note: marker }, { note: 'x' } as unknown as LogRecord], 'RECORD_INVALID'],
        [
          'too large',
          [
            { type: 't', note: marker },
            { type: 't', big: tooBig },
          ],
          'RECORD_TOO_LARGE',
        ],
        [
          'not JSON, last of 30',
          [...Array.from({ length: 29 }, (_, i) => ({ type: 't', note: marker, i })), { type: 't', n: Number.NaN } as unknown as LogRecord],
          'RECORD_NOT_JSON',
        ],
      ]
      for (const [what, batch, code] of bad) {
        await expectCode(store.append('s', 2, batch), code, `batch with a record that is ${what}`)
        assertSame(await readLog(store, 's'), records(1, 'before'), `the log after the refused batch with a record that is ${what}`)
      }
      await store.append('s', 2, records(1, 'after'))
      const raw = await dump()
      assert.ok(!raw.includes(marker), 'the dump holds bytes of a refused batch')
    },
  }),
  defineCase({
    id: 'log.atomic.no-half-batch',
    title: 'readers polling during appends never see half a batch',
    async run({ store, openStore }) {
      const reader = await openStore()
      const batchSize = 5
      const batches = 20
      let done = false
      let pollError: unknown
      const seenLengths: number[] = []
      const poll = (async () => {
        while (!done) {
          const entries = await readFrom(reader, 's')
          seenLengths.push(entries.length)
          const tags = entries.map((e) => e.record.tag)
          for (let i = 0; i < entries.length; i += batchSize) {
            const slice = tags.slice(i, i + batchSize)
            assert.ok(
              slice.every((t) => t === slice[0]),
              'a batch is interleaved with another',
            )
          }
        }
      })().catch((error: unknown) => {
        pollError = error
      })
      let seq = 1
      for (let b = 0; b < batches && pollError === undefined; b++) {
        await store.append('s', seq, records(batchSize, `b${b}`))
        seq += batchSize
      }
      done = true
      await poll
      if (pollError !== undefined) throw pollError
      for (const length of seenLengths) {
        assert.equal(length % batchSize, 0, `a reader saw ${length} records: part of a batch`)
      }
      assert.equal((await readLog(store, 's')).length, batches * batchSize)
    },
  }),
  defineCase({
    id: 'log.read.paging',
    title:
      'read pages with after/limit: dense from after + 1, at most limit, never empty before the end, also while appends land between pages',
    async run({ store }) {
      for (let i = 0; i < 5; i++) await store.append('s', i * 5 + 1, records(5, `p${i}`))
      const seen: number[] = []
      let after = 0
      let nextSeq = 26
      for (let page = 0; ; page++) {
        assert.ok(page < 100, 'paging with limit 4 never reached an empty page')
        const entries = await store.read('s', { after, limit: 4 })
        checkPage(entries, after, 4, `page ${page}`, nextSeq - 1 - after)
        if (entries.length === 0) break
        for (const e of entries) seen.push(e.seq)
        after = entries[entries.length - 1]!.seq
        if (page < 3) {
          await store.append('s', nextSeq, records(2, `late${page}`))
          nextSeq += 2
        }
      }
      assert.deepEqual(
        seen,
        Array.from({ length: nextSeq - 1 }, (_, i) => i + 1),
      )
      assert.deepEqual(await store.read('s', { after: nextSeq - 1 }), [])
      assert.deepEqual(await store.read('s', { after: nextSeq + 50, limit: 10 }), [], 'a read past the end is empty')
      assert.deepEqual(await store.read('s', { after: 3, limit: 0 }), [])
      const tail = await readFrom(store, 's', 24)
      assert.deepEqual(
        tail.map((e) => e.seq),
        Array.from({ length: nextSeq - 25 }, (_, i) => i + 25),
      )
    },
  }),
  defineCase({
    id: 'log.read.ordering',
    title: 'seqs order as numbers across 9/10/100 and beyond',
    async run({ store }) {
      let seq = 1
      while (seq <= 120) {
        const size = seq < 8 ? 1 : 7
        await store.append(
          's',
          seq,
          Array.from({ length: size }, (_, i) => ({ type: 't', n: seq + i })),
        )
        seq += size
      }
      const all = await readFrom(store, 's')
      assert.equal(all.length, seq - 1, `reading the log of ${seq - 1} records page by page ended after ${all.length}`)
      assert.ok(
        all.every((e) => e.record.n === e.seq),
        'each record sits at its own seq',
      )
      for (const [after, limit] of [
        [9, 3],
        [99, 2],
        [10, 1],
        [8, 5],
        [19, 2],
        [98, 4],
      ] as const) {
        const page = await store.read('s', { after, limit })
        checkPage(page, after, limit, `read after ${after} limit ${limit}`, seq - 1 - after)
        for (const e of page) assert.equal(e.record.n, e.seq, `the record at seq ${e.seq}`)
        if (after < 90) continue
        const rest = await readFrom(store, 's', after, limit)
        assert.deepEqual(
          rest.map((e) => e.seq),
          Array.from({ length: seq - 1 - after }, (_, i) => after + 1 + i),
          `paging from ${after} by ${limit}`,
        )
      }
    },
  }),
  defineCase({
    id: 'log.read.isolation',
    title: 'look-alike log ids never share records: a/a1/A, and ids with : / % and spaces',
    async run({ store }) {
      const ids = ['a', 'a1', 'A', 'a:b', 'a/b', 'a%2Fb', 'a b', 'a:1', 'a/', 'a%', 'ab', ' a', 'a\u00e9']
      for (const [index, id] of ids.entries()) {
        await appendToNewLog(store, id, [{ type: 't', id, index }], 'the store treats it as the same log as a look-alike id')
      }
      for (const [index, id] of ids.entries()) {
        const entries = await store.read(id)
        assert.deepEqual(
          entries.map((e) => e.record),
          [{ type: 't', id, index }],
          `log ${JSON.stringify(id)}`,
        )
      }
    },
  }),
  defineCase({
    id: 'log.read.your-writes',
    title: 'a read after a resolved append sees it, from the same and from another instance',
    async run({ store, openStore }) {
      const other = await openStore()
      for (let i = 1; i <= 20; i++) {
        await store.append('s', i, [{ type: 't', i }])
        const mine = await store.read('s', { after: i - 1 })
        assert.deepEqual(
          mine.map((e) => e.record),
          [{ type: 't', i }],
          `own read after append ${i}`,
        )
        const theirs = await readLog(other, 's')
        assert.equal(theirs.length, i, `another instance's read after append ${i}`)
      }
    },
  }),
  defineCase({
    id: 'log.roundtrip.hard-json',
    title: 'records come back deep-equal: astral characters, \\u0000, 2^53, floats, empty containers, deep nesting',
    async run({ store, openStore }) {
      let deep: unknown = { leaf: 'bottom' }
      for (let i = 0; i < 64; i++) deep = i % 2 ? { d: deep } : [deep]
      const hard: LogRecord[] = [
        {
          type: 'hard.strings',
          astral: '\u{1F600}\u{1D11E}\u{10FFFF}',
          nul: 'a\u0000b',
          ctl: '\u0001\u001f\u007f',
          quotes: `"'\\/`,
          rtl: '\u202e',
          bom: '\ufeff',
          nl: 'a\r\nb\tc',
        },
        {
          type: 'hard.numbers',
          max: 2 ** 53,
          min: -(2 ** 53),
          safe: Number.MAX_SAFE_INTEGER,
          tenth: 0.1,
          third: 1 / 3,
          tiny: 5e-324,
          huge: 1.7976931348623157e308,
          small: 1e-7,
          neg: -0.5,
          zero: 0,
          exp: 1e21,
        },
        { type: 'hard.empty', obj: {}, arr: [], str: '', nested: { a: [{}], b: [[]] } },
        { type: 'hard.deep', deep: deep as LogRecord },
        {
          type: 'hard.keys',
          '': 'empty key',
          'a.b': 1,
          'a b': 2,
          '\u0000k': 3,
          '\u{1F600}': 4,
          __proto__x: 5,
          constructor: 'c',
          '10': 'ten',
          '9': 'nine',
        },
        { type: 'hard.mixed', list: [1, 'two', true, null, { three: [3] }], bools: [true, false], nulls: [null, null] },
      ]
      await store.append('s', 1, hard)
      for (const reader of [store, await openStore()]) {
        const back = await readLog(reader, 's')
        assert.deepEqual(back, hard)
        for (let i = 0; i < hard.length; i++) {
          assert.equal(JSON.stringify(back[i]!.nul ?? null), JSON.stringify(hard[i]!.nul ?? null))
        }
        const numbers = back[1]!
        assert.ok(Object.is(numbers.max, 2 ** 53) && Object.is(numbers.tiny, 5e-324) && Object.is(numbers.third, 1 / 3))
      }
    },
  }),
  defineCase({
    id: 'log.limits.record',
    title: 'a record exactly at maxRecordBytes lands; one byte more fails with RECORD_TOO_LARGE and writes nothing',
    async run({ store, options }) {
      const limits = options.limits ?? store.limits
      assert.deepEqual({ ...store.limits }, { ...limits }, 'the store declares the limits given to the suite')
      const exact = sizedRecord(limits.maxRecordBytes)
      assert.equal(utf8Length(JSON.stringify(exact)), limits.maxRecordBytes)
      const over = sizedRecord(limits.maxRecordBytes + 1)
      await expectCode(store.append('s', 1, [over]), 'RECORD_TOO_LARGE', 'record one byte over')
      assert.deepEqual(await store.read('s'), [])
      if (limits.maxRecordBytes <= limits.maxBatchBytes) {
        await store.append('s', 1, [exact])
        assert.deepEqual(await readLog(store, 's'), [exact])
      }
      const multibyte = sizedRecord(limits.maxRecordBytes + 1, '\u00e9')
      await expectCode(store.append('t', 1, [multibyte]), 'RECORD_TOO_LARGE', 'size counts UTF-8 bytes, not characters')
    },
  }),
  defineCase({
    id: 'log.limits.batch',
    title: 'a batch exactly at maxBatchBytes lands; one byte more fails with RECORD_TOO_LARGE and writes nothing',
    async run({ store, options }) {
      const limits = options.limits ?? store.limits
      const exact = sizedBatch(limits.maxBatchBytes, limits.maxRecordBytes)
      const over = sizedBatch(limits.maxBatchBytes + 1, limits.maxRecordBytes)
      await expectCode(store.append('s', 1, over), 'RECORD_TOO_LARGE', 'batch one byte over')
      assert.deepEqual(await store.read('s'), [])
      await store.append('s', 1, exact)
      assert.equal((await readLog(store, 's')).length, exact.length)
    },
  }),
  defineCase({
    id: 'log.delete.only-target',
    title: "delete removes one session's log, lease and wakeup, nothing else, and can run twice",
    async run({ store, clock }) {
      for (const id of ['a', 'a1', 'ab', 'a:', 'b']) await store.append(id, 1, [{ type: 't', id }])
      if (store.leases) {
        await store.leases.acquire('a', 'owner', 60_000)
        await store.leases.acquire('a1', 'owner', 60_000)
      }
      if (store.wakeups) {
        await store.wakeups.schedule('a', clock.now() - 2)
        await store.wakeups.schedule('a1', clock.now() - 1)
      }
      await store.delete('a')
      await store.delete('a')
      assert.deepEqual(await store.read('a'), [])
      for (const id of ['a1', 'ab', 'a:', 'b']) assert.deepEqual(await readLog(store, id), [{ type: 't', id }], id)
      await store.append('a', 1, [{ type: 't', again: true }])
      assert.deepEqual(await readLog(store, 'a'), [{ type: 't', again: true }])
      if (store.leases) {
        await store.leases.acquire('a', 'someone-else', 60_000).catch((error: { code?: string }) => {
          if (error.code !== 'LEASE_HELD') throw error
          assert.fail('the lease of the deleted session "a" is still held by its owner: delete removes the session\'s lease')
        })
        await expectCode(store.leases.acquire('a1', 'someone-else', 60_000), 'LEASE_HELD', "look-alike's lease survives")
      }
      if (store.wakeups) {
        assert.deepEqual(
          (await store.wakeups.due(10)).map((w) => w.logId),
          ['a1'],
        )
      }
    },
  }),
  defineCase({
    id: 'log.race.same-seq',
    title: 'several instances appending at the same expected seq: exactly one wins',
    requires: ['races'],
    async run({ openRacer, store, concurrency }) {
      const writers = await Promise.all(Array.from({ length: concurrency }, () => openRacer()))
      for (let round = 0; round < 3; round++) {
        const base = round * 2 + 1
        const outcomes = await Promise.allSettled(writers.map((w, i) => w.append('s', base, records(2, `r${round}w${i}`))))
        const winners = outcomes.filter((o) => o.status === 'fulfilled')
        assert.equal(winners.length, 1, `round ${round}: ${winners.length} writers won`)
        for (const o of outcomes) {
          if (o.status === 'rejected') assert.equal((o.reason as { code?: string }).code, 'LOG_CONFLICT', String(o.reason))
        }
      }
      await Promise.all(writers.map((w) => w.close?.()))
      const log = await readLog(store, 's')
      assert.equal(log.length, 6)
      for (let i = 0; i < 6; i += 2) assert.equal(log[i]!.tag, log[i + 1]!.tag, 'a batch stays together')
    },
  }),
  defineCase({
    id: 'log.race.retry-loops',
    title: 'writers that re-read and retry on conflict land every batch exactly once, contiguous',
    requires: ['races'],
    async run({ openRacer, store, concurrency }) {
      const perWriter = 6
      const writers = await Promise.all(Array.from({ length: concurrency }, () => openRacer()))
      await Promise.all(
        writers.map(async (w, wi) => {
          for (let b = 0; b < perWriter; b++) {
            const batch = records(1 + ((wi + b) % 3), `w${wi}b${b}`)
            for (let attempt = 0; ; attempt++) {
              assert.ok(attempt < 500, 'a writer never got through')
              const tail = await readLog(w, 's')
              try {
                await w.append('s', tail.length + 1, batch)
                break
              } catch (error) {
                assert.equal((error as { code?: string }).code, 'LOG_CONFLICT')
              }
            }
          }
        }),
      )
      const log = await readLog(store, 's')
      const runs: string[] = []
      for (const record of log) if (runs[runs.length - 1] !== record.tag) runs.push(String(record.tag))
      assert.equal(runs.length, concurrency * perWriter, 'every batch exactly once, each contiguous')
      assert.equal(new Set(runs).size, runs.length, 'no batch appears twice')
      for (const tag of runs) {
        const members = log.filter((r) => r.tag === tag)
        assert.deepEqual(
          members.map((r) => r.i),
          members.map((_, i) => i),
          `batch ${tag} is whole and in order`,
        )
      }
      await Promise.all(writers.map((w) => w.close?.()))
    },
  }),
]

export type { HarnessStore }
