import assert from 'node:assert/strict'
import {
  replayRunStream,
  resumeHttpResponse,
  resumeServerSentEventsResponse,
  type StreamChunk,
  toHttpResponse,
  toServerSentEventsResponse,
} from '@tanstack/ai'
import { defineCase } from '../case.js'
import { textChunk } from './streams-hook.js'
import { SSE_URL_BASE } from './racer-settings.js'
import { chunks, deltas, readToEnd, runIdOf, SOON_MS, streamsOn, textsOf, within, snap } from './stream-kit.js'

const URL_BASE = SSE_URL_BASE

/** One SSE event of a response: its `id:` and its parsed `data:`. */
interface SseEvent {
  id: string | undefined
  data: { type: string; delta?: string; name?: string }
}

/** Reads SSE events from `body` until `stop` says so (then cancels the body, as a closed tab does) or the body ends. */
async function readEvents(body: ReadableStream<Uint8Array>, stop: (events: SseEvent[]) => boolean = () => false): Promise<SseEvent[]> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const events: SseEvent[] = []
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return events
    buffer += decoder.decode(value, { stream: true })
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const lines = buffer.slice(0, end).split('\n')
      buffer = buffer.slice(end + 2)
      const id = lines.find((l) => l.startsWith('id: '))?.slice(4)
      const data = lines.find((l) => l.startsWith('data: '))?.slice(6)
      if (data !== undefined) events.push({ id, data: JSON.parse(data) })
    }
    if (stop(events)) {
      await reader.cancel()
      return events
    }
  }
}

/** One NDJSON line of a durable `toHttpResponse`: `{ id, chunk }`. */
interface NdjsonEnvelope {
  id: string
  chunk: { type: string; delta?: string }
}

/** Reads NDJSON envelopes from `body` until `stop` says so (then cancels the body) or the body ends. */
async function readLines(
  body: ReadableStream<Uint8Array>,
  stop: (lines: NdjsonEnvelope[]) => boolean = () => false,
): Promise<NdjsonEnvelope[]> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const lines: NdjsonEnvelope[] = []
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return lines
    buffer += decoder.decode(value, { stream: true })
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end).trim()
      buffer = buffer.slice(end + 1)
      if (line !== '') lines.push(JSON.parse(line) as NdjsonEnvelope)
    }
    if (stop(lines)) {
      await reader.cancel()
      return lines
    }
  }
}

/** A chat run's chunks, with a gate after the seventh text chunk the case opens once it has cut its reader. */
function gatedRun(total: number): { stream: AsyncIterable<StreamChunk>; open(): void } {
  let open!: () => void
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  async function* stream(): AsyncGenerator<StreamChunk> {
    yield { type: 'RUN_STARTED', runId: 'r', threadId: 't', timestamp: 1 } as StreamChunk
    for (let n = 1; n <= total; n++) {
      if (n === 8) await gate
      yield textChunk(n)
    }
    yield { type: 'RUN_FINISHED', runId: 'r', threadId: 't', finishReason: 'stop', timestamp: 2 } as StreamChunk
  }
  return { stream: stream(), open }
}

/** The `stream.*` cases through TanStack AI's own HTTP helpers and `Request`s. */
export const streamHttpCases = [
  defineCase({
    id: 'stream.sse.resume',
    title:
      "TanStack AI's toServerSentEventsResponse on the store, a reader cut mid-stream, resumeServerSentEventsResponse on another instance (in another process when the run has them): every chunk once, in order",
    async run(context) {
      const runId = runIdOf('sse')
      const run = gatedRun(20)
      const producer = streamsOn(context).durability(new Request(URL_BASE, { method: 'POST', headers: { 'X-Run-Id': runId } }))
      const response = toServerSentEventsResponse(run.stream, { durability: { adapter: producer, batch: 3 } })
      const seen = await within(
        readEvents(response.body!, (events) => events.filter((e) => e.data.type === 'TEXT_MESSAGE_CONTENT').length >= 4),
        'the first events of the run',
      )
      run.open()
      const last = seen.at(-1)!.id
      assert.ok(last, 'every event of a durable response has an id')
      // With processes, the resume runs in another process on its own store, as after a reload served by another server.
      const racer = await context.openRacerProcess()
      const other = streamsOn(context, racer?.store ?? (await context.openRacer()))
      const resume = new Request(`${URL_BASE}?runId=${encodeURIComponent(runId)}`, { headers: { 'Last-Event-ID': last } })
      const body = racer
        ? new Response(await within(racer.resumeSse(runId, last), 'the resume in another process', SOON_MS * 2)).body!
        : resumeServerSentEventsResponse({ adapter: other.durability(resume) }).body!
      const resumed = await within(readEvents(body), 'the resumed response to its end', SOON_MS * 2)
      const all = [...seen, ...resumed]
      const texts = all.filter((e) => e.data.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.data.delta)
      assert.deepEqual(texts, textsOf(chunks(1, 20)), 'every text chunk once, in order, across the cut')
      assert.equal(all.at(-1)?.data.type, 'RUN_FINISHED', 'the resumed response ends with the run')
      assert.equal(new Set(all.map((e) => e.id)).size, all.length, 'no event delivered twice')
      const stored = await snap(other.durability({ runId }))
      assert.deepEqual(
        all.map((e) => e.id),
        stored.map((e) => e.offset),
        'the events are the stored log, in order',
      )
    },
  }),
  defineCase({
    id: 'stream.ndjson.resume',
    title:
      "TanStack AI's toHttpResponse on the store, a reader cut mid-stream, resumeHttpResponse from ?offset on another instance, and replayRunStream from the start: every chunk once, in order",
    async run(context) {
      const runId = runIdOf('ndjson')
      const run = gatedRun(20)
      const producer = streamsOn(context).durability(new Request(URL_BASE, { method: 'POST', headers: { 'X-Run-Id': runId } }))
      const response = toHttpResponse(run.stream, { durability: { adapter: producer, batch: 3 } })
      const seen = await within(
        readLines(response.body!, (lines) => lines.filter((l) => l.chunk?.type === 'TEXT_MESSAGE_CONTENT').length >= 4),
        'the first lines of the run',
      )
      run.open()
      const last = seen.at(-1)?.id
      assert.ok(typeof last === 'string' && last.length > 0, 'every line of a durable NDJSON response is an { id, chunk } envelope')
      const other = streamsOn(context, await context.openRacer())
      const resume = new Request(`${URL_BASE}?runId=${encodeURIComponent(runId)}&offset=${encodeURIComponent(last)}`)
      const resumed = await within(
        readLines(resumeHttpResponse({ adapter: other.durability(resume) }).body!),
        'the resumed NDJSON response to its end',
        SOON_MS * 2,
      )
      const all = [...seen, ...resumed]
      const texts = all.filter((l) => l.chunk.type === 'TEXT_MESSAGE_CONTENT').map((l) => l.chunk.delta)
      assert.deepEqual(texts, textsOf(chunks(1, 20)), 'every text chunk once, in order, across the cut')
      assert.equal(new Set(all.map((l) => l.id)).size, all.length, 'no line delivered twice')
      const replayed: StreamChunk[] = []
      await within(
        (async () => {
          for await (const chunk of replayRunStream(streamsOn(context, await context.openStore()).durability({ runId })))
            replayed.push(chunk)
        })(),
        'replayRunStream of the closed run to its end',
      )
      assert.deepEqual(
        replayed.map((c) => c.type),
        all.map((l) => l.chunk.type),
        'replayRunStream gives the whole run from the start, as the two responses did',
      )
    },
  }),
  defineCase({
    id: 'stream.request',
    title:
      'from a Request: the run is X-Run-Id, then ?runId, else a new one; Last-Event-ID, then ?offset, is the resume offset and names its run',
    async run(context) {
      const streams = streamsOn(context)
      const [a, b] = [runIdOf('header'), runIdOf('query')]
      const both = streams.durability(new Request(`${URL_BASE}?runId=${b}`, { headers: { 'X-Run-Id': a } }))
      assert.equal(both.resumeFrom(), null, 'a request without an offset is a producer')
      const [offset] = await both.append(chunks(1, 1))
      assert.deepEqual(deltas(await snap(streams.durability({ runId: a }))), ['d1 '], 'X-Run-Id comes before ?runId')
      await streams.durability(new Request(`${URL_BASE}?runId=${b}`)).append(chunks(2, 2))
      assert.deepEqual(deltas(await snap(streams.durability({ runId: b }))), ['d2 '], '?runId names the run')
      const fresh = [streams.durability(new Request(URL_BASE)), streams.durability(new Request(URL_BASE))]
      await fresh[0]!.append(chunks(3, 3))
      assert.deepEqual(await snap(fresh[1]!), [], 'a request that names no run starts a new one each time')
      await streams.durability({ runId: a }).append(chunks(4, 4))
      await streams.durability({ runId: a }).close()
      for (const request of [
        new Request(URL_BASE, { headers: { 'Last-Event-ID': offset! } }),
        new Request(`${URL_BASE}?offset=${encodeURIComponent(offset!)}`),
      ]) {
        const resumer = streams.durability(request)
        assert.equal(resumer.resumeFrom(), offset, 'the resume offset comes from Last-Event-ID or ?offset')
        assert.deepEqual(deltas(await readToEnd(resumer.read(offset!), 'the resume')), ['d4 '], 'the offset alone finds its run')
      }
    },
  }),
  defineCase({
    id: 'stream.secrets',
    title: "chunks are stored without the session's secrets: not a byte of them in the store, [secret] in their place",
    requires: ['dump'],
    async run(context) {
      const secret = 'sk-live-0123456789abcdef'
      const runId = runIdOf('secret')
      const durability = streamsOn(context, context.store, [secret]).durability({ runId })
      await durability.append([
        { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `the key is ${secret}`, timestamp: 1 } as StreamChunk,
        {
          type: 'TOOL_CALL_ARGS',
          toolCallId: 'c',
          delta: JSON.stringify({ key: Buffer.from(secret).toString('base64') }),
          timestamp: 2,
        } as StreamChunk,
      ])
      const dump = await context.dump()
      assert.ok(!dump.includes(secret) && !dump.includes(Buffer.from(secret).toString('base64')), 'the store holds the secret')
      const [text] = await snap(durability)
      assert.equal((text!.chunk as { delta: string }).delta, 'the key is [secret]')
    },
  }),
]
