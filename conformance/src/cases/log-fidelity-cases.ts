import assert from 'node:assert/strict'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { defineCase, readLog } from '../case.js'

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
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [String(codeUnits(k)), codeUnits(v)]))
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
        assert.deepEqual(codeUnits(back), codeUnits(LONE), 'the records changed on the way through the store')
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
      first[0]!.type = 'changed'
      ;(first[0]!.nested as { list: number[] }).list.push(3)
      ;((first[0]!.nested as { deep: { s: string } }).deep as { s: string }).s = 'b'
      ;(first[1]!.list as Array<{ x: number }>)[0]!.x = 99
      first.push({ type: 'extra' })
      assert.deepEqual(await readLog(store, 's'), copy, 'changing the appended objects changed the log')
      // A reader changes what it got.
      const page = await store.read('s')
      page[0]!.record.type = 'mutated'
      ;(page[0]!.record.nested as { list: number[] }).list.length = 0
      ;(page[1]!.record.list as Array<{ x: number }>)[0]!.x = -1
      ;(page as { seq: number }[])[0]!.seq = 42
      page.reverse()
      page.push({ seq: 3, record: { type: 'pushed' } })
      assert.deepEqual(await readLog(store, 's'), copy, 'changing what read returned changed the log')
      const paged = await store.read('s', { after: 0, limit: 1 })
      paged[0]!.record.n = 100
      assert.deepEqual(await readLog(store, 's'), copy, 'changing a page changed the log')
      const again = await store.read('s', { after: 0, limit: 1 })
      assert.equal(again[0]!.record.n, 1)
    },
  }),
]
