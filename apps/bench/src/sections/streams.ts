import { randomUUID } from 'node:crypto'
import type { StreamChunk } from '@tanstack/ai'
import { harnessStreams } from '@tanstack/ai-harness/streams'
import type { BenchConfig } from '../config.js'
import { progress } from '../progress.js'
import type { StreamsRow } from '../report/result.js'
import { timing } from '../report/timing.js'
import { median, quantile, ratio, round } from '../stats.js'
import type { Target } from '../targets/target.js'

/** Chunks per append in the rate part. */
const RATE_BATCH = 8

/** A text chunk of about the size a model's delta has; `at` is when its producer started its append. */
const chunkOf = (n: number, at = 0): StreamChunk =>
  ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: `token ${n} of the answer, `, timestamp: at }) as StreamChunk
const batchOf = (from: number, size: number, at = 0) => Array.from({ length: size }, (_, i) => chunkOf(from + i, at))
/** The bytes the stream stores for a batch: its records, as the bare write's value. */
const recordBytes = (chunks: readonly StreamChunk[]) => JSON.stringify(chunks.map((chunk) => ({ type: 'harness.stream.chunk', chunk })))

/**
 * Resumable streams (`@tanstack/ai-harness/streams`) on the store: (1) appending a batch of
 * chunks to a run's stream against one bare conditional write of the same bytes, rounds
 * alternating; (2) with `streamsConcurrency` streams at once (64; 8 in the smoke run), each producer appending a chunk every
 * `streamsLagEveryMs` and a reader on another store instance (so it polls, as a reader in
 * another process does), the time from the producer's append call to the reader's receipt;
 * (3) as many producers appending batches of 8 as fast as they can for `streamsSustainMs`,
 * against as many writers doing bare writes of the same bytes for as long.
 */
export async function measureStreams(target: Target, config: BenchConfig): Promise<StreamsRow> {
  const append = await appendCost(target, config)
  const lag = await readerLag(target, config)
  const ours = await sustained(target, config, 'ours')
  const bare = await sustained(target, config, 'bare')
  const row: StreamsRow = {
    store: target.name,
    batch: config.streamsBatch,
    append: timing(append.ours),
    bareWrite: timing(append.bare),
    ratio: ratio(median(append.ours), median(append.bare)),
    streams: config.streamsConcurrency,
    lagP50Ms: round(quantile(lag, 0.5), 1),
    lagP99Ms: round(quantile(lag, 0.99), 1),
    lagSamples: lag.length,
    chunksPerSecond: round(ours, 0),
    bareChunksPerSecond: round(bare, 0),
    rateRatio: ratio(ours, bare),
  }
  progress(
    `  ${target.name}: append of ${row.batch} chunks ${row.append.medianMs} ms (bare ${row.bareWrite.medianMs} ms, ${row.ratio}×); lag p50 ${row.lagP50Ms} ms, p99 ${row.lagP99Ms} ms at ${row.streams} streams; ${row.chunksPerSecond} chunks/s (bare ${row.bareChunksPerSecond})`,
  )
  return row
}

/** Part 1: append of a batch to a run's stream and the bare write of its bytes, alternating, the first rounds dropped. */
async function appendCost(target: Target, config: BenchConfig): Promise<{ ours: number[]; bare: number[] }> {
  const store = target.createStore()
  const durability = harnessStreams({ store }).durability({ runId: `bench-${randomUUID()}` })
  const ours: number[] = []
  const bare: number[] = []
  const warmUp = 3
  try {
    for (let round = 0; round < config.streamsRounds + warmUp; round++) {
      const chunks = batchOf(round * config.streamsBatch, config.streamsBatch)
      const bytes = recordBytes(chunks)
      const timeOurs = async () => {
        const start = performance.now()
        await durability.append(chunks)
        if (round >= warmUp) ours.push(performance.now() - start)
      }
      const timeBare = async () => {
        const start = performance.now()
        await target.bareWrite(`stream-bare-${randomUUID()}`, bytes)
        if (round >= warmUp) bare.push(performance.now() - start)
      }
      if (round % 2 === 0) {
        await timeOurs()
        await timeBare()
      } else {
        await timeBare()
        await timeOurs()
      }
    }
  } finally {
    await store.close?.()
  }
  return { ours, bare }
}

/** Part 2: every chunk's lag from its producer's append call to a reader on another instance, in ms. */
async function readerLag(target: Target, config: BenchConfig): Promise<number[]> {
  const producerStore = target.createStore()
  const readerStore = target.createStore()
  const producers = harnessStreams({ store: producerStore })
  const readers = harnessStreams({ store: readerStore, firstChunkDeadlineMs: 10_000 })
  const lags: number[] = []
  try {
    await allOf(
      Array.from({ length: config.streamsConcurrency }, async (_, s) => {
        const runId = `bench-lag-${randomUUID()}`
        const producer = producers.durability({ runId })
        // Streams start spread over one period, as requests arrive.
        await sleep((config.streamsLagEveryMs * s) / config.streamsConcurrency)
        const [first] = await producer.append([chunkOf(0, performance.now())])
        const reading = (async () => {
          for await (const { chunk } of readers.durability({ runId, offset: first! }).read(first!)) {
            lags.push(performance.now() - (chunk as { timestamp: number }).timestamp)
          }
        })()
        // A producer that fails leaves its reader waiting: that failure is the one reported.
        reading.catch(() => {})
        for (let n = 1; n <= config.streamsLagChunks; n++) {
          await sleep(config.streamsLagEveryMs)
          await producer.append([chunkOf(n, performance.now())])
        }
        await producer.close()
        await reading
      }),
    )
  } finally {
    await Promise.all([producerStore.close?.(), readerStore.close?.()])
  }
  return lags
}

/** Part 3: chunks per second over `streamsSustainMs` with `streamsConcurrency` producers at once, or the bare writes of the same bytes. */
async function sustained(target: Target, config: BenchConfig, which: 'ours' | 'bare'): Promise<number> {
  const store = target.createStore()
  const streams = harnessStreams({ store })
  let chunks = 0
  const start = performance.now()
  const end = start + config.streamsSustainMs
  try {
    await allOf(
      Array.from({ length: config.streamsConcurrency }, async () => {
        const producer = streams.durability({ runId: `bench-rate-${randomUUID()}` })
        for (let n = 0; performance.now() < end; n += RATE_BATCH) {
          const batch = batchOf(n, RATE_BATCH)
          if (which === 'ours') await producer.append(batch)
          else await target.bareWrite(`stream-rate-${randomUUID()}`, recordBytes(batch))
          chunks += RATE_BATCH
        }
      }),
    )
  } finally {
    await store.close?.()
  }
  return chunks / ((performance.now() - start) / 1000)
}

/** Every stream's work settled before the store closes; then the first failure, if any. */
async function allOf(work: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((r) => r.status === 'rejected')
  if (failed) throw failed.reason
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
