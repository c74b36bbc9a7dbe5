import assert from 'node:assert/strict'
import { type LogRecord, utf8Length } from '@tanstack/ai-harness/store'
import fc from 'fast-check'
import { assertSame, defineCase, expectCode, readLog } from '../case.js'
import { checkGenerated } from '../generated.js'

/** Keys real apps write: JSON Schema and Mongo style `$` keys, dotted paths, `__proto__` and other Object.prototype names. */
const KEYS = [
  '$ref',
  '$schema',
  '$',
  '.',
  '.hidden',
  'a.b.c',
  '__proto__',
  'constructor',
  'toString',
  'zeta',
  'alpha',
  'Beta',
  '',
  ' ',
  'é',
  '😀',
]
/** Numbers at the edges of what JSON and a double keep. */
const NUMBERS = [
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  2 ** 53 + 2,
  -(2 ** 63),
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  2.2250738585072014e-308,
  1e21,
  1e-7,
  0.1 + 0.2,
  123456789.12345679,
  -0,
  0,
]
/** Characters that some JSON, line and text handling takes apart: line and paragraph separators, NEL, BOM, escapes. */
const HARD_TEXT = [
  '\u2028',
  '\u2029',
  '\u0085',
  '\ufeff',
  '\r\n',
  '\n',
  '\t',
  '\\',
  '"',
  '</script>',
  '\u0000',
  '\u001f',
  'é',
  '€',
  '😀',
  '\u{10ffff}',
]

const textArbitrary = fc.oneof(
  fc.constantFrom(...HARD_TEXT),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.array(fc.constantFrom(...HARD_TEXT), { maxLength: 6 }).map((parts) => parts.join('')),
)
const keyArbitrary = fc.oneof(fc.constantFrom(...KEYS), fc.string({ unit: 'binary', maxLength: 6 }))
/** A JSON value as text: objects are written key by key, so `__proto__` is an own key and the order is the text's. */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    textArbitrary.map((s) => JSON.stringify(s)),
    fc.constantFrom(...NUMBERS).map((n) => JSON.stringify(n)),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
    fc.constantFrom('true', 'false', 'null'),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc
      .uniqueArray(fc.tuple(keyArbitrary, tie('value')), { maxLength: 6, selector: ([key]) => key })
      .map((entries) => `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`),
  ),
})).value

/** A record from generated JSON text: `type` first, then the generated keys in their order. */
const recordArbitrary: fc.Arbitrary<string> = fc
  .uniqueArray(
    fc.tuple(
      keyArbitrary.filter((k) => k !== 'type'),
      jsonText,
    ),
    { maxLength: 6, selector: ([key]) => key },
  )
  .map((entries) => `{"type":"gen"${entries.map(([key, value]) => `,${JSON.stringify(key)}:${value}`).join('')}}`)

/** What a store must give back: the record as its JSON text says, keys in order, `__proto__` an own key. */
const asText = (records: readonly LogRecord[]) => records.map((r) => JSON.stringify(r))

const CONTENT_FIX =
  'Keep the JSON text of each record as JSON.stringify wrote it (text, not a JSON type that reorders keys or rounds numbers; no line splitting, no re-encoding), and parse it with JSON.parse'

/** A record of exactly `bytes` UTF-8 bytes of JSON made of multibyte text (4-, 3- and 2-byte characters), ASCII only for the last few bytes. */
function multibyteRecord(bytes: number, tag: string): LogRecord {
  const base = { type: 'multibyte', tag, text: '' }
  let room = bytes - utf8Length(JSON.stringify(base))
  const parts: string[] = []
  for (const [char, size] of [
    ['😀', 4],
    ['€', 3],
    ['é', 2],
  ] as const) {
    const count = Math.floor(room / size / (size === 2 ? 1 : 2))
    parts.push(char.repeat(count))
    room -= count * size
  }
  parts.push('x'.repeat(room))
  const record = { ...base, text: parts.join('') }
  assert.equal(utf8Length(JSON.stringify(record)), bytes, 'the suite built a record of the wrong size')
  return record
}

export const contentCases = [
  defineCase({
    id: 'content.generated',
    title:
      'generated records ($ and . keys, __proto__ keys, numbers at the edges of JSON, U+2028, U+2029, U+0085, any code point) come back exactly: same values, same key order, from every instance',
    async run({ store, openStore }) {
      const reader = await openStore()
      let seq = 1
      await checkGenerated(fc.array(recordArbitrary, { minLength: 1, maxLength: 5 }), 40, async (texts) => {
        const batch = texts.map((text) => JSON.parse(text) as LogRecord)
        const logId = `content-${seq}`
        seq++
        await store.append(logId, 1, batch)
        for (const [who, from] of [
          ['the writing instance', store],
          ['another instance', reader],
        ] as const) {
          const back = await readLog(from, logId)
          assertSame(
            asText(back),
            asText(batch),
            `the records read back from ${who}, as JSON text (key order and numbers included). ${CONTENT_FIX}`,
          )
          back.forEach((record, i) => {
            assert.deepEqual(
              Object.keys(record),
              Object.keys(batch[i]!),
              `${who}: record ${i + 1}'s own keys (an own __proto__ key must stay one). ${CONTENT_FIX}`,
            )
          })
        }
      })
    },
  }),
  defineCase({
    id: 'content.multibyte-large',
    title: 'multibyte text past 64 KiB, line separators and key order come back exactly, in one record and across a batch',
    async run({ store, openStore, limits }) {
      const size = Math.min(limits.maxRecordBytes, 100 * 1024)
      const big = multibyteRecord(size, 'big')
      const separated = JSON.parse(
        '{"type":"lines","z":"a\u2028b","$ref":"#/x","a":"c\u2029d","__proto__":{"polluted":true},".":"e\u0085f"}',
      ) as LogRecord
      await store.append('s', 1, [big])
      await store.append('s', 2, [separated])
      for (const from of [store, await openStore()]) {
        const back = await readLog(from, 's')
        assert.equal(
          back.length,
          2,
          `a log of two records read back as ${back.length}: the store split or merged records at U+2028/U+2029/U+0085 or in long text. ${CONTENT_FIX}`,
        )
        assert.equal(
          (back[0]!.text as string).length,
          (big.text as string).length,
          `the ${size}-byte multibyte record came back ${(back[0]!.text as string).length} code units long, not ${(big.text as string).length}. ${CONTENT_FIX}`,
        )
        assertSame(asText(back), asText([big, separated]), `the records as JSON text. ${CONTENT_FIX}`)
        assert.ok(Object.hasOwn(back[1]!, '__proto__'), `"__proto__" came back as the prototype, not an own key. ${CONTENT_FIX}`)
      }
    },
  }),
  defineCase({
    id: 'content.limits-utf8',
    title:
      'limits count UTF-8 bytes of the JSON text: a multibyte record of exactly maxRecordBytes and a batch of exactly maxBatchBytes land; one byte more is RECORD_TOO_LARGE',
    async run({ store, limits, dump, options }) {
      const exact = multibyteRecord(limits.maxRecordBytes, 'exact')
      await store.append('s', 1, [exact]).catch((error: { code?: string }) => {
        if (error.code !== 'RECORD_TOO_LARGE') throw error
        assert.fail(
          `a record of exactly maxRecordBytes (${limits.maxRecordBytes}) UTF-8 bytes of JSON, made of multibyte characters, was refused: count the limit in UTF-8 bytes of JSON.stringify, not in escaped bytes of the stored form (\\u escapes), and size columns and items for the UTF-8 text`,
        )
      })
      assertSame(asText(await readLog(store, 's')), asText([exact]), `the record at the limit. ${CONTENT_FIX}`)
      // One byte more, in a form whose UTF-16 length is far below the limit: a store counting code units lets it through.
      const over = multibyteRecord(limits.maxRecordBytes + 1, 'over')
      await expectCode(
        store.append('s', 2, [over]),
        'RECORD_TOO_LARGE',
        `a record of maxRecordBytes + 1 UTF-8 bytes (${(over.text as string).length} UTF-16 code units): the limit is in UTF-8 bytes, not characters`,
      )
      const perRecord = Math.min(limits.maxRecordBytes, Math.ceil(limits.maxBatchBytes / Math.min(limits.maxBatchRecords ?? 8, 8)))
      const count = Math.ceil(limits.maxBatchBytes / perRecord)
      const batch = Array.from({ length: count }, (_, i) =>
        multibyteRecord(i < count - 1 ? perRecord : limits.maxBatchBytes - perRecord * (count - 1), `b${i}`),
      )
      if ((limits.maxBatchRecords ?? count) >= count) {
        await store.append('batch', 1, batch).catch((error: { code?: string }) => {
          if (error.code !== 'RECORD_TOO_LARGE') throw error
          assert.fail(
            `a batch of exactly maxBatchBytes (${limits.maxBatchBytes}) UTF-8 bytes of multibyte JSON was refused: count the batch in UTF-8 bytes of each record's JSON`,
          )
        })
        assert.equal((await readLog(store, 'batch')).length, count, 'the batch at the limit')
      }
      if (options.dump) assert.ok(!(await dump()).includes('"over"'), 'the refused record left bytes in the dump')
    },
  }),
]
