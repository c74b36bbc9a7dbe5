import assert from 'node:assert/strict'
import { type HarnessStore, utf8Length } from '@tanstack/ai-harness/store'
import { appendToNewLog, assertSame, type CaseContext, defineCase, expectCode, readLog } from '../case.js'

/**
 * Ids that a store which trims, normalises (NFC, NFD, NFKC), folds case or drops
 * invisible characters would merge. Every one is its own session.
 */
export const LOOK_ALIKE_IDS: readonly string[] = [
  'sess',
  'sess ',
  ' sess',
  'sess\t',
  'sess\n',
  'Sess',
  'SESS',
  'caf\u00e9', // é, NFC
  'cafe\u0301', // e + combining acute, NFD
  '\u00c5', // Å
  'A\u030a', // A + combining ring
  '\u212b', // Angstrom sign (NFC makes it Å)
  'stra\u00dfe', // ß
  'STRASSE',
  'strasse',
  '\ufb01x', // ligature ﬁ (NFKC makes it fi)
  'fix',
  '\uff53ess', // fullwidth s (NFKC makes it s)
  'se\u200bss', // zero-width space
  '\u0130d', // İ (lower-cases to i + dot)
  'i\u0307d',
  'id',
]

/** `bytes` of UTF-8 made of `unit` repeated, topped up with ASCII `x` to the exact size. */
export function idOfBytes(bytes: number, unit: string, tail = ''): string {
  const room = bytes - utf8Length(tail)
  const count = Math.floor(room / utf8Length(unit))
  const id = unit.repeat(count) + 'x'.repeat(room - count * utf8Length(unit)) + tail
  assert.equal(utf8Length(id), bytes)
  return id
}

/**
 * Ids at the store's declared maximum: ASCII, 2-, 3- and 4-byte characters, characters
 * that key encodings escape (`:` ` ` `%` `/` `~`), and pairs that share all but their
 * last byte (a store that cuts ids at any length below the maximum merges them).
 */
export function longIds(max: number): string[] {
  const ids = [
    idOfBytes(max, 'a'),
    idOfBytes(max - 1, 'a', 'b'),
    idOfBytes(max, '\u00e9'),
    idOfBytes(max, '\u20ac'),
    idOfBytes(max, '\u{1F600}'),
    idOfBytes(max, ':'),
    idOfBytes(max, ' '),
    idOfBytes(max, '%'),
    idOfBytes(max, '/'),
    idOfBytes(max, '~'),
  ]
  // Pairs that share their first `cut` bytes: a store that cuts ids at `cut` merges them.
  for (const cut of [32, 64, 100, 128, 200, 250, 255, 256, 500, 512, 1000, 1024, 2000, 2048]) {
    if (cut >= max) continue
    const prefix = idOfBytes(cut, 'p')
    ids.push(prefix + 'a' + 'y'.repeat(max - cut - 1), prefix + 'b' + 'y'.repeat(max - cut - 1))
  }
  ids.push(idOfBytes(max - 1, 'z') + 'a', idOfBytes(max - 1, 'z') + 'b')
  return [...new Set(ids)]
}

/** Ids no store may accept: each call that takes one must refuse it with INVALID_ARGUMENT. */
export function refusedIds(max: number): Array<[string, string]> {
  return [
    ['the empty id', ''],
    ['an id with NUL', 'a\u0000b'],
    ['NUL alone', '\u0000'],
    ['a lone high surrogate', 'x\ud800'],
    ['a lone low surrogate', '\udfffx'],
    ['two high surrogates', 'a\ud800\ud800'],
    ['a reversed pair', '\udc00\ud800'],
    [`an id of ${max + 1} bytes`, idOfBytes(max + 1, 'a')],
    [`an id of ${max + 1} bytes in 3-byte characters`, idOfBytes(max + 1, '\u20ac')],
    [`an id of ${max + 1} bytes that a key encoding escapes`, idOfBytes(max + 1, ':')],
  ]
}

/** Every method that takes a log id, called with `id`; each must reject with INVALID_ARGUMENT. */
async function expectRefused(store: HarnessStore, id: string, what: string, clock: CaseContext['clock']): Promise<void> {
  const marker = 'refused-id-marker-5b1e'
  await expectCode(store.append(id, 1, [{ type: 't', marker }]), 'INVALID_ARGUMENT', `append to ${what}`)
  await expectCode(store.read(id), 'INVALID_ARGUMENT', `read of ${what}`)
  await expectCode(store.read(id, { after: 0, limit: 10 }), 'INVALID_ARGUMENT', `paged read of ${what}`)
  await expectCode(store.delete(id), 'INVALID_ARGUMENT', `delete of ${what}`)
  if (store.leases) await expectCode(store.leases.acquire(id, 'owner', 30_000), 'INVALID_ARGUMENT', `leases.acquire of ${what}`)
  if (store.wakeups) {
    await expectCode(store.wakeups.schedule(id, clock.now() - 1), 'INVALID_ARGUMENT', `wakeups.schedule of ${what}`)
    await expectCode(store.wakeups.cancel(id), 'INVALID_ARGUMENT', `wakeups.cancel of ${what}`)
  }
}

export const logIdCases = [
  defineCase({
    id: 'log.id.exact',
    title: 'log ids are exact strings: no trimming, no Unicode normalisation (NFC, NFD, NFKC), no case folding, no dropped characters',
    async run({ store, openStore }) {
      const merged =
        'the store treats it as the same log as a look-alike id (log ids are exact strings: no trimming, normalising or case folding)'
      for (const [index, id] of LOOK_ALIKE_IDS.entries()) await appendToNewLog(store, id, [{ type: 't', id, index }], merged)
      const other = await openStore()
      for (const [index, id] of LOOK_ALIKE_IDS.entries()) {
        assertSame(await readLog(other, id), [{ type: 't', id, index }], `log ${JSON.stringify(id)}`)
      }
      await store.delete('sess')
      assert.deepEqual(await readLog(other, 'sess'), [])
      for (const id of LOOK_ALIKE_IDS.slice(1))
        assert.equal((await readLog(other, id)).length, 1, `deleting "sess" left ${JSON.stringify(id)}`)
    },
  }),
  defineCase({
    id: 'log.id.long',
    title: "ids up to the store's declared maxLogIdBytes are kept whole: long ids that differ only in their last byte never share a log",
    async run({ store, openStore, maxLogIdBytes }) {
      const ids = longIds(maxLogIdBytes)
      for (const [index, id] of ids.entries()) {
        const merged = `the store keeps only part of this ${utf8Length(id)}-byte id (it must keep ids up to its declared maxLogIdBytes, ${maxLogIdBytes}, whole)`
        await appendToNewLog(store, id, [{ type: 't', index }], merged)
      }
      const other = await openStore()
      for (const [index, id] of ids.entries()) {
        const what = `the id of ${utf8Length(id)} bytes ending ${JSON.stringify(id.slice(-6))}`
        assert.deepEqual(await readLog(other, id), [{ type: 't', index }], what)
        await store.append(id, 2, [{ type: 't', index, again: true }])
      }
      for (const [index, id] of ids.entries()) assert.equal((await readLog(other, id)).length, 2, `the log of id ${index}`)
      for (const id of ids) await other.delete(id)
      for (const id of ids) assert.deepEqual(await readLog(store, id), [])
    },
  }),
  defineCase({
    id: 'log.id.refused',
    title:
      'ids that are empty, hold NUL or a lone surrogate, or are over maxLogIdBytes are refused with INVALID_ARGUMENT by append, read, delete, leases.acquire, wakeups.schedule and cancel',
    async run({ store, clock, maxLogIdBytes }) {
      for (const [what, id] of refusedIds(maxLogIdBytes)) await expectRefused(store, id, what, clock)
      // A store that replaced the lone surrogate would have written to one of these.
      for (const id of ['x\ufffd', 'x', '\ufffdx', 'a', 'ab', 'a\ufffd\ufffd', idOfBytes(maxLogIdBytes, 'a')]) {
        assert.deepEqual(await store.read(id), [], `look-alike ${JSON.stringify(id)} stays empty`)
      }
    },
  }),
  defineCase({
    id: 'log.id.refused-no-trace',
    title: 'a call refused for its id writes nothing: the raw store is byte for byte the same before and after',
    requires: ['dump'],
    async run({ store, clock, dump, maxLogIdBytes }) {
      await store.append('ok', 1, [{ type: 't', ok: true }])
      if (store.leases) await store.leases.acquire('ok', 'owner', 30_000)
      if (store.wakeups) await store.wakeups.schedule('ok', clock.now() + 1000)
      const before = await dump()
      for (const [what, id] of refusedIds(maxLogIdBytes)) await expectRefused(store, id, what, clock)
      const after = await dump()
      assert.ok(!after.includes('refused-id-marker-5b1e'), 'the dump holds a record of a refused append')
      assert.equal(after, before, 'refused calls changed the stored bytes')
    },
  }),
]
