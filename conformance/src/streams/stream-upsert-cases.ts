import assert from 'node:assert/strict'
import { memoryStream, type StreamChunk } from '@tanstack/ai'
import { defineCase } from '../case.js'
import { textChunk } from './streams-hook.js'
import { chunks, deltas, readToEnd, runIdOf, streamsOn, within, snap } from './stream-kit.js'

type Upsert = Array<{ chunk: StreamChunk; offset: string }>

/** The `stream.upsert.*` cases: idempotent over an overlap, and refusals validated before any write. */
export const streamUpsertCases = [
  defineCase({
    id: 'stream.upsert.idempotent',
    title: 'upsert over an overlapping range stores nothing twice, replaces a changed chunk in place, and returns the offsets supplied',
    async run(context) {
      const runId = runIdOf('upsert')
      const streams = streamsOn(context)
      const producer = streams.durability({ runId })
      const offsets = await producer.append(chunks(1, 4))
      const takeover = streamsOn(context, await context.openStore()).durability({ runId })
      const overlap: Upsert = [2, 3, 4].map((n) => ({ offset: offsets[n - 1]!, chunk: textChunk(n) }))
      assert.deepEqual(await takeover.upsert(overlap), offsets.slice(1), 'upsert returns the offsets in the order supplied')
      assert.deepEqual(await takeover.upsert(overlap), offsets.slice(1), 'a second replay of the same range')
      assert.deepEqual(deltas(await snap(takeover)), ['d1 ', 'd2 ', 'd3 ', 'd4 '], 'replaying an overlap stores nothing twice')
      await takeover.upsert([{ offset: offsets[2]!, chunk: textChunk(30) }])
      const after = await snap(takeover)
      assert.deepEqual(deltas(after), ['d1 ', 'd2 ', 'd30 ', 'd4 '], 'upsert replaces the chunk stored at its offset')
      assert.deepEqual(
        after.map((e) => e.offset),
        offsets,
        'a replaced chunk keeps its offset',
      )
      const more = await takeover.append(chunks(5, 5))
      await takeover.close()
      const all = await readToEnd(streams.durability({ runId }).read('-1'), 'read after the upserts')
      assert.deepEqual(deltas(all), ['d1 ', 'd2 ', 'd30 ', 'd4 ', 'd5 '])
      assert.deepEqual(
        all.map((e) => e.offset),
        [...offsets, ...more],
      )
    },
  }),
  defineCase({
    id: 'stream.upsert.refuses',
    title:
      'upsert refuses a hole, an offset repeated in the batch, and an offset it did not mint (another run, another backend, a forgery), writing nothing',
    async run(context) {
      const runId = runIdOf('refuse')
      const streams = streamsOn(context)
      const producer = streams.durability({ runId })
      const offsets = await producer.append(chunks(1, 3))
      const [otherOffset] = await streams.durability({ runId: runIdOf('other') }).append(chunks(9, 9))
      const [memoryOffset] = await memoryStream({ runId }).append(chunks(9, 9))
      const good = { offset: offsets[0]!, chunk: textChunk(100) }
      const sparse: Upsert = [good]
      sparse[2] = { offset: offsets[2]!, chunk: textChunk(102) }
      const bad: Record<string, Upsert> = {
        'a hole in the entries': sparse,
        'an offset repeated in the batch': [
          good,
          { offset: offsets[1]!, chunk: textChunk(101) },
          { offset: offsets[1]!, chunk: textChunk(101) },
        ],
        "another run's offset": [good, { offset: otherOffset!, chunk: textChunk(101) }],
        "memoryStream's offset": [good, { offset: memoryOffset!, chunk: textChunk(101) }],
        'an offset that is not one': [good, { offset: 'not-an-offset', chunk: textChunk(101) }],
        'an offset past the tail (a hole in the stream)': [good, { offset: forgeBeyond(offsets), chunk: textChunk(101) }],
      }
      for (const [what, entries] of Object.entries(bad)) {
        await assert.rejects(within(producer.upsert(entries), what), `upsert must refuse ${what}`)
        assert.deepEqual(
          deltas(await snap(producer)),
          ['d1 ', 'd2 ', 'd3 '],
          `a refused upsert (${what}) writes nothing, not even its valid entries`,
        )
      }
    },
  }),
]

/**
 * An offset like the stream's own, far past its tail: the last offset with its digits
 * made much larger, or with something appended when it has no digits. A store never
 * minted it.
 */
function forgeBeyond(offsets: readonly string[]): string {
  const last = offsets.at(-1)!
  const digits = [...last.matchAll(/\d+/g)]
  if (digits.length === 0) return `${last}0`
  const chosen = digits.find((m) => Number(m[0]) === offsets.length) ?? digits.at(-1)!
  return `${last.slice(0, chosen.index)}${Number(chosen[0]) + 1000}${last.slice(chosen.index! + chosen[0].length)}`
}
