import type { StreamChunk } from '@tanstack/ai'
import { harnessStreams } from '@tanstack/ai-harness/streams'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { chunkRecords } from '../../src/streams/batches.js'

const chunk = (n: number, size = 40): StreamChunk =>
  ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `${n} `.padEnd(size, 'x'), timestamp: n }) as StreamChunk
const limits = { maxRecordBytes: 4_096, maxBatchBytes: 65_536, maxBatchRecords: 100 }

describe('stream records', () => {
  it('an appended batch is one record of all its chunks when it fits; a lone chunk is a record of its own', () => {
    const batch = Array.from({ length: 32 }, (_, n) => chunk(n)) as never[]
    expect(chunkRecords(batch, limits)).toEqual([{ type: 'harness.stream.chunks', chunks: batch }])
    expect(chunkRecords([batch[0]!], limits)).toEqual([{ type: 'harness.stream.chunk', chunk: batch[0] }])
  })

  it('a batch larger than a record is cut into records within the store limit, in order', () => {
    const batch = Array.from({ length: 60 }, (_, n) => chunk(n, 400)) as never[]
    const records = chunkRecords(batch, limits)
    expect(records.length).toBeGreaterThan(1)
    for (const record of records) expect(JSON.stringify(record).length).toBeLessThanOrEqual(limits.maxRecordBytes)
    expect(records.flatMap((r) => (r.type === 'harness.stream.chunks' ? (r.chunks as unknown[]) : [r.chunk]))).toEqual(batch)
  })

  it('on a store with small records: every chunk once, in order, each offset resumable, from another instance', async () => {
    const store = memoryStore({ limits })
    const streams = harnessStreams({ store })
    const batch = Array.from({ length: 60 }, (_, n) => chunk(n, 400))
    const producer = streams.durability({ runId: 'r' })
    const offsets = [...(await producer.append(batch)), ...(await producer.append([chunk(60)]))]
    await producer.close()
    expect(new Set(offsets).size).toBe(61)
    expect((await store.read('harness.stream/r')).length).toBeLessThan(61)
    const all = []
    for await (const entry of streams.durability({ runId: 'r' }).read('-1')) all.push(entry)
    expect(all.map((e) => e.offset)).toEqual(offsets)
    for (const k of [0, 7, 30, 59]) {
      const after = []
      for await (const entry of streams.durability({ runId: 'r' }).read(offsets[k]!)) after.push(entry.chunk)
      expect(after).toEqual([...batch.slice(k + 1), chunk(60)])
    }
  })
})

describe('an append whose first reply was lost', () => {
  it('is stored once: a LOG_CONFLICT from the store retrying its own landed write is read back as ours', async () => {
    const store = memoryStore()
    let lose = true
    // As a store whose first try landed but whose reply was lost: its retry meets its own batch.
    const retrying = {
      ...store,
      async append(...args: Parameters<typeof store.append>) {
        const result = await store.append(...args)
        if (!lose) return result
        lose = false
        throw Object.assign(new Error('expected seq taken'), { code: 'LOG_CONFLICT' })
      },
    }
    const producer = harnessStreams({ store: retrying }).durability({ runId: 'r' })
    const offsets = await producer.append([chunk(1), chunk(2), chunk(3)])
    await producer.append([chunk(4)])
    const stored = await harnessStreams({ store }).durability({ runId: 'r' }).snapshot()
    expect(stored.map((e) => e.chunk)).toEqual([chunk(1), chunk(2), chunk(3), chunk(4)])
    expect(stored.slice(0, 3).map((e) => e.offset)).toEqual(offsets)
  })
  it('is not mistaken for equal chunks another producer appended first: a takeover that appends them again stores them again', async () => {
    const store = memoryStore()
    const streams = harnessStreams({ store })
    const first = await streams.durability({ runId: 'r' }).append([chunk(1), chunk(2)])
    // A new producer guesses the first seq, meets the old producer's equal batch there, and must not take it as its own.
    const again = await streams.durability({ runId: 'r' }).append([chunk(1), chunk(2)])
    expect(again).not.toEqual(first)
    const stored = await streams.durability({ runId: 'r' }).snapshot()
    expect(stored.map((e) => e.offset)).toEqual([...first, ...again])
  })
})
