import assert from 'node:assert/strict'
import { type HarnessStore, type LogRecord, type StoreLimits, utf8Length } from '@tanstack/ai-harness/store'
import { defineCase, expectCode, readFrom, readLog } from '../case.js'

/** One record of batch `tag`, position `i` of `size`: readers check each batch by its tag. */
const member = (tag: string, i: number, size: number): LogRecord => ({ type: 'test.big', tag, i, size })

/**
 * Batch sizes around the limits stores are tempted to chunk at (DynamoDB's 25 and 100
 * items per request, 1000 rows), then the largest batch the store declares: as many
 * records as `maxBatchRecords` allows and `maxBatchBytes` holds.
 */
function bigBatchSizes(limits: StoreLimits): number[] {
  const recordBytes = utf8Length(JSON.stringify(member('b00', 99_999, 99_999)))
  const most = Math.min(limits.maxBatchRecords ?? Number.POSITIVE_INFINITY, Math.floor(limits.maxBatchBytes / recordBytes))
  return [...new Set([1, 25, 26, 100, 101, 1000, most].map((n) => Math.min(n, most)))]
}

/** Polls `reader` until `stop()`: every state it reads must be whole batches, each whole and in order. */
function pollWholeBatches(reader: HarnessStore, logId: string, boundaries: Set<number>, stop: () => boolean) {
  let polls = 0
  const done = (async () => {
    while (!stop()) {
      const entries = await readFrom(reader, logId)
      polls++
      assert.ok(boundaries.has(entries.length), `a reader saw ${entries.length} records: part of a batch`)
      for (let i = 0; i < entries.length; ) {
        const { tag, size } = entries[i]!.record as unknown as { tag: string; size: number }
        for (let j = 0; j < size; j++) {
          const record = entries[i + j]?.record
          assert.ok(record?.tag === tag && record.i === j, `a reader saw batch ${tag} broken at its record ${j}`)
        }
        i += size
      }
    }
  })()
  return { done, polls: () => polls }
}

/** Seqs inside a batch of `size` at `first` where a store that writes in chunks would stop between two of them. */
function insideSeqs(first: number, size: number): number[] {
  const offsets = [1, 10, 24, 25, 26, 50, 99, 100, 101, 128, 255, 256, 500, 999, 1000, 1024, size - 1]
  return [...new Set(offsets.filter((k) => k > 0 && k < size).map((k) => first + k))]
}

/** Appends at seqs inside the landing batch until it has landed; each must conflict and write nothing. */
async function probeInside(prober: HarnessStore, logId: string, first: number, size: number, landed: () => boolean): Promise<void> {
  const seqs = insideSeqs(first, size)
  if (seqs.length === 0) return
  do {
    for (const seq of seqs) {
      if (landed()) return
      try {
        await prober.append(logId, seq, [member('probe', 0, 1)])
      } catch (error) {
        if ((error as { code?: string }).code === 'LOG_CONFLICT') continue
        throw error
      }
      assert.fail(
        `an append at seq ${seq} landed while a batch of ${size} records at seq ${first} was being written: the batch is not written in one step`,
      )
    }
  } while (!landed())
}

export const logBatchCases = [
  defineCase({
    id: 'log.append.big-batch',
    title:
      'batches of 1, 25, 26, 100, 101, 1000 records and the largest the store declares land whole, at the right seqs; readers in other instances never see part of one, and appends at a seq inside one conflict while it lands',
    async run({ store, openRacer, limits }) {
      const sizes = bigBatchSizes(limits)
      const boundaries = new Set([0])
      let total = 0
      for (const size of sizes) {
        total += size
        boundaries.add(total)
      }
      const [readerA, readerB, prober] = await Promise.all([openRacer(), openRacer(), openRacer()])
      let appending = true
      const polls = [readerA, readerB].map((reader) => pollWholeBatches(reader, 's', boundaries, () => !appending).done)
      let next = 1
      try {
        for (const [b, size] of sizes.entries()) {
          const batch = Array.from({ length: size }, (_, i) => member(`b${b}`, i, size))
          let landed = false
          const appended = store
            .append('s', next, batch)
            .catch((error: Error) => {
              const declared = `maxBatchRecords ${limits.maxBatchRecords ?? 'none'}, maxBatchBytes ${limits.maxBatchBytes}`
              assert.fail(
                `the append of ${size} records at seq ${next} failed (${error.message}); the store declares ${declared}, so it must take this batch`,
              )
            })
            .finally(() => {
              landed = true
            })
          // While the batch lands, appends at seqs inside it must conflict: a store that
          // writes a batch in chunks has a moment when the next free seq is inside it.
          const probes = probeInside(prober, 's', next, size, () => landed)
          // Rejects as soon as a reader or a probe sees part of a batch, so the case stops there.
          const broken = Promise.race([...polls, probes].map((p) => p.then(() => new Promise<never>(() => {}))))
          broken.catch(() => {})
          const { nextSeq } = await Promise.race([appended, broken])
          await probes
          assert.equal(nextSeq, next + size, `an append of ${size} records at seq ${next} returned nextSeq ${nextSeq}, not ${next + size}`)
          next = nextSeq
        }
      } finally {
        appending = false
        await Promise.all(polls)
      }
      const log = await readLog(store, 's')
      assert.equal(log.length, total)
      let seq = 0
      for (const [b, size] of sizes.entries()) {
        for (let i = 0; i < size; i++, seq++) {
          const record = log[seq]!
          assert.ok(record.tag === `b${b}` && record.i === i, `seq ${seq + 1} holds record ${String(record.i)} of ${String(record.tag)}`)
        }
      }
      await expectCode(
        store.append('s', next - sizes.at(-1)!, [member('late', 0, 1)]),
        'LOG_CONFLICT',
        'append at the start of the last batch',
      )
      await expectCode(store.append('s', next - 1, [member('late', 0, 1)]), 'LOG_CONFLICT', 'append at the last seq')
      await expectCode(
        store.append('s', sizes.at(-1)! + 1, [member('late', 0, 1)]),
        'LOG_CONFLICT',
        "append at the seq after the last batch's size",
      )
      assert.equal((await store.append('s', next, [member('late', 0, 1)])).nextSeq, next + 1)
    },
  }),
  defineCase({
    id: 'log.append.next-seq',
    title:
      'the next seq comes from the log, not from the batch: nextSeq is expectedSeq plus the batch size, and the next append must expect it',
    async run({ store, openStore }) {
      const other = await openStore()
      let next = 1
      for (const [i, size] of [3, 1, 5, 2, 26, 1, 4].entries()) {
        const writer = i % 2 === 0 ? store : other
        const { nextSeq } = await writer.append(
          's',
          next,
          Array.from({ length: size }, (_, j) => member(`n${i}`, j, size)),
        )
        assert.equal(
          nextSeq,
          next + size,
          `an append of ${size} records at seq ${next} returned nextSeq ${nextSeq}, not ${next + size} (expectedSeq + the batch size)`,
        )
        for (const wrong of [size + 1, next + 1, next - 1, 1]) {
          if (wrong === nextSeq || wrong < 1) continue
          await expectCode(
            other.append('s', wrong, [member('wrong', 0, 1)]),
            'LOG_CONFLICT',
            `append at ${wrong} when the next seq is ${nextSeq}`,
          )
        }
        next = nextSeq
      }
      assert.equal((await readLog(store, 's')).length, next - 1)
    },
  }),
  defineCase({
    id: 'log.atomic.refused-big-batch',
    title: 'a batch of 30 or 1000 records whose last record is refused writes none of them, however the store chunks its writes',
    async run({ store, limits }) {
      await store.append('s', 1, [member('before', 0, 1)])
      const most = limits.maxBatchRecords ?? 1000
      for (const size of [...new Set([26, 30, 101, Math.min(1000, most)])].filter((n) => n <= most)) {
        const batch: LogRecord[] = Array.from({ length: size - 1 }, (_, i) => member(`bad${size}`, i, size))
        await expectCode(
          store.append('s', 2, [...batch, { type: 't', n: Number.NaN } as unknown as LogRecord]),
          'RECORD_NOT_JSON',
          `a batch of ${size} ending in NaN`,
        )
        await expectCode(
          store.append('s', 2, [...batch, { note: 'no type' } as unknown as LogRecord]),
          'RECORD_INVALID',
          `a batch of ${size} ending without a type`,
        )
        await expectCode(
          store.append('s', 2, [...batch, { type: 't', pad: 'x'.repeat(limits.maxRecordBytes) }]),
          'RECORD_TOO_LARGE',
          `a batch of ${size} ending in a record over maxRecordBytes`,
        )
        assert.deepEqual(await readLog(store, 's'), [member('before', 0, 1)], `a refused batch of ${size} left records`)
      }
      if (limits.maxBatchRecords !== undefined) {
        const over = Array.from({ length: limits.maxBatchRecords + 1 }, (_, i) => ({ type: 't', i }))
        await expectCode(store.append('s', 2, over), 'RECORD_TOO_LARGE', 'a batch of maxBatchRecords + 1 records')
        assert.deepEqual(await readLog(store, 's'), [member('before', 0, 1)])
      }
    },
  }),
]
