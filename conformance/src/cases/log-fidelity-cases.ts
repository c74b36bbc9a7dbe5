import assert from 'node:assert/strict'
import type { LogEntry, LogRecord } from '@tanstack/ai-harness/store'
import { assertSame, defineCase, readFrom, readLog } from '../case.js'

/** Strings that are not well-formed UTF-16. JSON text keeps them as `\ud800` escapes; a store that keeps the text keeps them. */
const LONE: LogRecord[] = [
  { type: 'lone.high', s: '\ud800' },
  { type: 'lone.low', s: '\udfff' },
  { type: 'lone.inside', s: 'a\ud800b\udc00c', end: 'z\udbff', start: '\udc01z' },
  { type: 'lone.reversed', s: '\udc00\ud800' },
  { type: 'lone.pair', s: '\ud83d\ude00', replacement: '\ufffd' },
  { type: 'lone.keys', '\ud800': 'high key', nested: { '\udfff': ['\udbff', { k: '\ud800\ud800' }] } },
  { type: 'lone\ud800type' },
]

/** Compares strings by code units, so U+FFFD never passes for a lone surrogate. */
function codeUnits(value: unknown): unknown {
  if (typeof value === 'string') return Array.from({ length: value.length }, (_, i) => value.charCodeAt(i).toString(16))
  if (Array.isArray(value)) return value.map(codeUnits)
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [String(codeUnits(k)), codeUnits(v)]))
  return value
}

export const logFidelityCases = [
  defineCase({
    id: 'log.roundtrip.surrogates',
    title: 'lone surrogates in string values and keys come back exactly, never as U+FFFD, from every instance',
    async run({ store, openStore }) {
      await store.append('s', 1, LONE.slice(0, 3))
      await store.append('s', 4, LONE.slice(3))
      for (const reader of [store, await openStore()]) {
        const back = await readLog(reader, 's')
        assert.deepEqual(
          codeUnits(back),
          codeUnits(LONE),
          'the records changed on the way through the store (their code units, in hex): lone surrogates must come back as they were, never as U+FFFD',
        )
        assert.deepEqual(back, LONE)
      }
      const page = await store.read('s', { after: 5, limit: 2 })
      assert.deepEqual(codeUnits(page.map((e) => e.record)), codeUnits(LONE.slice(5, 5 + page.length)))
    },
  }),
  defineCase({
    id: 'log.roundtrip.no-shared-references',
    title: 'the store keeps copies: changing the appended objects after append, or the objects read returned, changes nothing stored',
    async run({ store }) {
      const first: LogRecord[] = [
        { type: 't', n: 1, nested: { list: [1, 2], deep: { s: 'a' } } },
        { type: 't', n: 2, list: [{ x: 1 }] },
      ]
      const copy = structuredClone(first)
      await store.append('s', 1, first)
      // The caller reuses its objects.
      const [a, b] = first as [LogRecord, LogRecord]
      a.type = 'changed'
      ;(a.nested as { list: number[] }).list.push(3)
      ;(a.nested as { deep: { s: string } }).deep.s = 'b'
      ;(b.list as Array<{ x: number }>)[0]!.x = 99
      first.push({ type: 'extra' })
      assertSame(await readLog(store, 's'), copy, 'changing the appended objects changed the log')
      // A reader changes what it got: the records, then the entries and the page.
      const [one, two] = (await store.read('s')) as [LogEntry, LogEntry]
      one.record.type = 'mutated'
      ;(one.record.nested as { list: number[] }).list.length = 0
      ;(two.record.list as Array<{ x: number }>)[0]!.x = -1
      assertSame(await readLog(store, 's'), copy, 'changing the records read returned changed the log')
      const again = await store.read('s')
      ;(again as { seq: number }[])[0]!.seq = 42
      again.reverse()
      again.push({ seq: 3, record: { type: 'pushed' } })
      assertSame(
        (await readFrom(store, 's')).map((e) => e.seq),
        [1, 2],
        'changing the entries read returned changed the seqs',
      )
      const paged = await store.read('s', { after: 0, limit: 1 })
      paged[0]!.record.n = 100
      assert.deepEqual(await readLog(store, 's'), copy, 'changing a page changed the log')
      assert.equal((await store.read('s', { after: 0, limit: 1 }))[0]!.record.n, 1, 'changing a page changed the next page')
    },
  }),
]
