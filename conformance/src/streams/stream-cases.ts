import assert from 'node:assert/strict'
import { defineCase } from '../case.js'
import { CASE_FIRST_CHUNK_MS } from './streams-hook.js'
import { chunks, deltas, readToEnd, textsOf, runIdOf, startReading, streamsOn, until, within, snap } from './stream-kit.js'

/** The `stream.*` cases of append, read, close and snapshot. */
export const streamCases = [
  defineCase({
    id: 'stream.offsets.minted',
    title:
      'append returns exactly one distinct offset per chunk, and reading after any of them (from another instance) resumes right after it',
    async run(context) {
      const runId = runIdOf('minted')
      const producer = streamsOn(context).durability({ runId })
      const offsets = [...(await producer.append(chunks(1, 3))), ...(await producer.append(chunks(4, 5)))]
      assert.equal(offsets.length, 5, `append returned ${offsets.length} offsets for 5 chunks`)
      assert.equal(new Set(offsets).size, 5, `offsets repeat: ${JSON.stringify(offsets)}`)
      for (const offset of offsets)
        assert.ok(
          typeof offset === 'string' && offset.length > 0 && !/[\r\n\0]/.test(offset),
          `offset ${JSON.stringify(offset)} cannot be an SSE id`,
        )
      await producer.close()
      const other = streamsOn(context, await context.openStore())
      for (const [k, offset] of offsets.entries()) {
        const got = await readToEnd(other.durability({ runId, offset }).read(offset), `read after offset ${k + 1}`)
        assert.deepEqual(deltas(got), textsOf(chunks(k + 2, 5)), `read after the offset of chunk ${k + 1}`)
        assert.deepEqual(
          got.map((e) => e.offset),
          offsets.slice(k + 1),
          'a read gives each chunk with the offset append returned for it',
        )
      }
    },
  }),
  defineCase({
    id: 'stream.order',
    title: 'a read from the start gives every chunk once, in append order, over many appends',
    async run(context) {
      const runId = runIdOf('order')
      const producer = streamsOn(context).durability({ runId })
      const offsets: string[] = []
      for (let i = 0; i < 10; i++) offsets.push(...(await producer.append(chunks(i * 3 + 1, i * 3 + 3))))
      await producer.close()
      const got = await readToEnd(
        streamsOn(context, await context.openStore())
          .durability({ runId })
          .read('-1'),
        'read from the start',
      )
      assert.deepEqual(deltas(got), textsOf(chunks(1, 30)), 'chunks in append order, each once')
      assert.deepEqual(
        got.map((e) => e.offset),
        offsets,
      )
    },
  }),
  defineCase({
    id: 'stream.read.tails',
    title: 'a read tails: it gives chunks appended after it started, and ends once the producer closes',
    async run(context) {
      const runId = runIdOf('tails')
      const producer = streamsOn(context).durability({ runId })
      const [first] = await producer.append(chunks(1, 1))
      const reader = startReading(
        streamsOn(context, await context.openStore())
          .durability({ runId, offset: first! })
          .read(first!),
      )
      await producer.append(chunks(2, 3))
      await until(() => reader.entries.length === 2, 'the tailing read got the chunks appended after it started')
      await producer.append(chunks(4, 4))
      await until(() => reader.entries.length === 3, 'the tailing read got the next chunk')
      await producer.close()
      await within(reader.done, 'the read ends once the stream is closed')
      assert.deepEqual(deltas(reader.entries), ['d2 ', 'd3 ', 'd4 '])
    },
  }),
  defineCase({
    id: 'stream.read.before-first',
    title: 'a read from the start that begins before the first chunk gets every chunk once it comes, and ends on close',
    async run(context) {
      const runId = runIdOf('first')
      const reader = startReading(
        streamsOn(context, await context.openStore())
          .durability({ runId })
          .read('-1'),
      )
      await new Promise((resolve) => setTimeout(resolve, CASE_FIRST_CHUNK_MS / 4))
      const producer = streamsOn(context).durability({ runId })
      await producer.append(chunks(1, 2))
      await producer.append(chunks(3, 3))
      await producer.close()
      await within(reader.done, 'the from-start read ends on close')
      assert.deepEqual(deltas(reader.entries), ['d1 ', 'd2 ', 'd3 '])
    },
  }),
  defineCase({
    id: 'stream.snapshot',
    title: 'snapshot resolves at once with what is stored (also while open), fresh each call, a copy, and [] for an unknown run',
    async run(context) {
      const runId = runIdOf('snapshot')
      const streams = streamsOn(context)
      assert.deepEqual(await within(streams.durability({ runId: runIdOf('unknown') }).snapshot(), 'snapshot of an unknown run'), [])
      const producer = streams.durability({ runId })
      const offsets = await producer.append(chunks(1, 2))
      const other = streamsOn(context, await context.openStore()).durability({ runId })
      const open = await within(other.snapshot(), 'snapshot of an open stream (it must not wait for more)')
      assert.deepEqual(
        open.map((e) => e.offset),
        offsets,
      )
      assert.deepEqual(deltas(open), ['d1 ', 'd2 '])
      ;(open[0]!.chunk as { delta: string }).delta = 'changed'
      open.pop()
      await producer.append(chunks(3, 3))
      const later = await within(other.snapshot(), 'the second snapshot')
      assert.deepEqual(deltas(later), ['d1 ', 'd2 ', 'd3 '], 'a snapshot is fresh, and changing a returned one changes nothing stored')
    },
  }),
  defineCase({
    id: 'stream.readers.many',
    title: 'many readers of one run, on other instances and from different offsets, each get every chunk after their offset once, in order',
    async run(context) {
      const runId = runIdOf('many')
      const producer = streamsOn(context).durability({ runId })
      const early = await producer.append(chunks(1, 2))
      const readers = []
      for (let i = 0; i < 6; i++) {
        const streams = streamsOn(context, await context.openStore())
        const offset = i % 2 === 0 ? '-1' : early[0]!
        readers.push({ from: i % 2 === 0 ? 1 : 2, reading: startReading(streams.durability({ runId, offset }).read(offset)) })
      }
      for (let n = 3; n <= 12; n += 2) await producer.append(chunks(n, n + 1))
      await producer.close()
      for (const [i, { from, reading }] of readers.entries()) {
        await within(reading.done, `reader ${i + 1} ends on close`)
        assert.deepEqual(deltas(reading.entries), textsOf(chunks(from, 12)), `reader ${i + 1}`)
      }
    },
  }),
  defineCase({
    id: 'stream.read.abort',
    title: 'a tailing read whose signal aborts ends at once, without an error, and delivers nothing after',
    async run(context) {
      const runId = runIdOf('abort')
      const producer = streamsOn(context).durability({ runId })
      await producer.append(chunks(1, 1))
      const controller = new AbortController()
      const reader = startReading(
        streamsOn(context, await context.openStore())
          .durability({ runId })
          .read('-1', controller.signal),
      )
      await until(() => reader.entries.length === 1, 'the read got the stored chunk')
      controller.abort()
      await within(reader.done, 'the read ends when its signal aborts (the producer never closed)', 2_000)
      await producer.append(chunks(2, 2))
      await new Promise((resolve) => setTimeout(resolve, 30))
      assert.equal(reader.entries.length, 1, 'nothing is delivered after the abort')
    },
  }),
  defineCase({
    id: 'stream.producer.dies',
    title: 'a producer that dies without close leaves a stream that snapshot returns and a takeover producer continues and closes',
    async run(context) {
      const runId = runIdOf('dies')
      const offsets = await streamsOn(context).durability({ runId }).append(chunks(1, 3))
      // The producer is gone: nothing of it is used again.
      const takeover = streamsOn(context, await context.openStore()).durability({ runId })
      const stored = await within(takeover.snapshot(), 'snapshot of a stream whose producer died')
      assert.deepEqual(
        stored.map((e) => e.offset),
        offsets,
      )
      const reader = startReading(
        streamsOn(context, await context.openStore())
          .durability({ runId })
          .read('-1'),
      )
      await until(() => reader.entries.length === 3, 'a reader gets what the dead producer stored')
      assert.deepEqual(await takeover.upsert(stored.map((e) => ({ offset: e.offset, chunk: e.chunk }))), offsets, 'the takeover lines up')
      await takeover.append(chunks(4, 4))
      await takeover.close()
      await within(reader.done, "the reader ends on the takeover's close")
      assert.deepEqual(deltas(reader.entries), ['d1 ', 'd2 ', 'd3 ', 'd4 '], 'every chunk once, in order')
    },
  }),
  defineCase({
    id: 'stream.unknown-run',
    title: 'resuming a run nothing was stored for fails (it never hangs); a from-start join of it fails after the first-chunk deadline',
    async run(context) {
      const streams = streamsOn(context)
      const runId = runIdOf('known')
      const [offset] = await streams.durability({ runId }).append(chunks(1, 1))
      const otherRun = runIdOf('unknown')
      const forged = offset!.split(runId).join(otherRun)
      await within(
        assert.rejects(
          readToEnd(streams.durability({ runId: otherRun, offset: forged }).read(forged), 'resume of an unknown run'),
          'a resume of an unknown run is refused',
        ),
        'the resume of an unknown run is refused at once',
      )
      await within(
        assert.rejects(
          readToEnd(streams.durability({ runId: otherRun }).read('-1'), 'join of an unknown run'),
          'a join of a run that never produces fails',
        ),
        'the join fails after the first-chunk deadline',
        CASE_FIRST_CHUNK_MS * 10,
      )
    },
  }),
  defineCase({
    id: 'stream.retention',
    title: 'a closed stream stays readable for its retention, then reads as gone: snapshot [] and resume refused',
    async run(context) {
      const runId = runIdOf('retention')
      const producer = streamsOn(context).durability({ runId })
      const [offset] = await producer.append(chunks(1, 2))
      await producer.close()
      context.clock.advance(59_000)
      const other = streamsOn(context, await context.openStore()).durability({ runId, offset: offset! })
      assert.deepEqual(deltas(await readToEnd(other.read(offset!), 'read within the retention')), ['d2 '])
      context.clock.advance(1_000)
      assert.deepEqual(await snap(other), [], 'after the retention a snapshot is empty')
      await assert.rejects(readToEnd(other.read(offset!), 'resume after the retention'), 'a resume after the retention is refused')
    },
  }),
]
