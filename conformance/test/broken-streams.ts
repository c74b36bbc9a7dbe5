import { InMemoryLockStore } from '@tanstack/ai/locks'
import type { StreamChunk, UpsertableStreamDurability } from '@tanstack/ai'
import { defaultStreamsHook, type LocksUnderTest, type StreamsContext, type StreamsHook } from '@tanstack/ai-harness-conformance'
import { harnessLocks, harnessStreams } from '@tanstack/ai-harness/streams'

/**
 * Streams and locks that are each wrong in one way, built by changing one thing of the
 * core's `harnessStreams` / `harnessLocks`. The `stream.*` and `lock.*` cases are only as
 * good as the broken ones they catch: `broken-streams.test.ts` proves each fails exactly
 * the cases listed with it, on the memory store.
 */
export interface BrokenStreams {
  readonly fails: readonly string[]
  readonly hook: StreamsHook
}

type Durability = UpsertableStreamDurability
type Change = (durability: Durability, context: StreamsContext) => Partial<Durability>

/** The default streams with some methods of each adapter replaced. */
function changed(change: Change): StreamsHook {
  return {
    ...defaultStreamsHook,
    streams: (context) => {
      const streams = defaultStreamsHook.streams(context)
      return {
        durability: (source) => {
          const durability = streams.durability(source)
          return { ...durability, ...change(durability, context) }
        },
      }
    },
  }
}

/** The default locks with `withLease` replaced. */
function changedLocks(make: (context: Parameters<StreamsHook['locks']>[0]) => LocksUnderTest): StreamsHook {
  return { ...defaultStreamsHook, locks: make }
}

const never = (signal?: AbortSignal) => new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve(), { once: true }))

export const brokenStreams: Record<string, BrokenStreams> = {
  'append returns one offset for the whole batch': {
    fails: [
      'stream.offsets.minted',
      'stream.order',
      'stream.snapshot',
      'stream.producer.dies',
      'stream.upsert.idempotent',
      'stream.sse.resume',
      'stream.ndjson.resume',
    ],
    hook: changed((d) => ({
      append: async (chunks: StreamChunk[]) => {
        const offsets = await d.append(chunks)
        return offsets.map(() => offsets[0]!)
      },
    })),
  },
  'read never ends, even after close': {
    fails: [
      'stream.offsets.minted',
      'stream.order',
      'stream.read.tails',
      'stream.read.before-first',
      'stream.readers.many',
      'stream.read.abort',
      'stream.producer.dies',
      'stream.retention',
      'stream.upsert.idempotent',
      'stream.sse.resume',
      'stream.ndjson.resume',
      'stream.request',
    ],
    hook: changed((d) => ({
      read: async function* (offset: string, signal?: AbortSignal) {
        yield* d.read(offset, signal)
        await never(signal)
      },
    })),
  },
  'read ignores its signal': {
    fails: ['stream.read.abort'],
    hook: changed((d) => ({ read: (offset: string) => d.read(offset) })),
  },
  'snapshot waits for the close (a read to its end)': {
    fails: [
      'stream.snapshot',
      'stream.producer.dies',
      'stream.retention',
      'stream.upsert.idempotent',
      'stream.upsert.refuses',
      'stream.request',
      'stream.secrets',
    ],
    hook: changed((d) => ({
      snapshot: async () => {
        const out = []
        for await (const entry of d.read('-1')) out.push(entry)
        return out
      },
    })),
  },
  'snapshot of an unknown run throws': {
    fails: ['stream.snapshot', 'stream.retention', 'stream.request'],
    hook: changed((d) => ({
      snapshot: async () => {
        const entries = await d.snapshot()
        if (entries.length === 0) throw new Error('unknown run')
        return entries
      },
    })),
  },
  'upsert appends every entry again': {
    fails: ['stream.upsert.idempotent', 'stream.upsert.refuses', 'stream.producer.dies'],
    hook: changed((d) => ({
      upsert: async (entries) => {
        await d.append(entries.map((e) => e.chunk))
        return entries.map((e) => e.offset)
      },
    })),
  },
  'upsert writes entry by entry, so a refused batch leaves its first entries': {
    fails: ['stream.upsert.refuses'],
    hook: changed((d) => ({
      upsert: async (entries) => {
        for (const entry of entries) await d.upsert([entry])
        return entries.map((e) => e.offset)
      },
    })),
  },
  'upsert skips an entry it cannot place instead of refusing': {
    fails: ['stream.upsert.refuses'],
    hook: changed((d) => ({
      upsert: async (entries) => {
        const placeable = []
        for (const entry of Array.from(entries)) {
          if (
            entry &&
            (await d.upsert([entry]).then(
              () => true,
              () => false,
            ))
          )
            placeable.push(entry)
        }
        return placeable.map((e) => e.offset)
      },
    })),
  },
  'chunks are stored with their secrets': {
    fails: ['stream.secrets'],
    hook: { ...defaultStreamsHook, streams: (context) => defaultStreamsHook.streams({ ...context, secrets: undefined }) },
  },
  '?runId comes before X-Run-Id': {
    fails: ['stream.request'],
    hook: {
      ...defaultStreamsHook,
      streams: (context) => {
        const streams = defaultStreamsHook.streams(context)
        return {
          durability: (source) => {
            if (!(source instanceof Request)) return streams.durability(source)
            const query = new URL(source.url).searchParams.get('runId')
            const headers = new Headers(source.headers)
            if (query) headers.set('X-Run-Id', query)
            return streams.durability(new Request(source.url, { headers }))
          },
        }
      },
    },
  },
  'a closed stream is kept for ever': {
    fails: ['stream.retention'],
    hook: {
      ...defaultStreamsHook,
      streams: (context) =>
        harnessStreams({
          store: context.store,
          clock: context.clock,
          secrets: context.secrets,
          retainMs: Number.POSITIVE_INFINITY,
          firstChunkDeadlineMs: 300,
        }),
    },
  },
  'a lock per process (TanStack AI’s InMemoryLockStore)': {
    fails: ['lock.exclusive', 'lock.expiry', 'lock.fenced', 'lock.renews', 'lock.signal'],
    hook: changedLocks(() => {
      const local = new InMemoryLockStore()
      let fence = 0
      return {
        withLock: (key, fn) => local.withLock(key, fn),
        withLease: (key, fn) => local.withLock(key, (signal) => fn({ fence: ++fence, signal })),
      }
    }),
  },
  'the lock signal never aborts': {
    fails: ['lock.signal'],
    hook: changedLocks((context) => {
      const locks = harnessLocks({ ...context, retryMs: { min: 1, max: 10 } })
      const quiet = new AbortController().signal
      return {
        withLock: (key, fn) => locks.withLock(key, () => fn(quiet)),
        withLease: (key, fn) => locks.withLease(key, (held) => fn({ ...held, signal: quiet })),
      }
    }),
  },
  'a lock that ignores its ttl (a dead holder keeps it for a year)': {
    fails: ['lock.expiry', 'lock.fenced', 'lock.signal'],
    hook: changedLocks((context) => harnessLocks({ ...context, ttlMs: 365 * 24 * 3_600_000, retryMs: { min: 1, max: 10 } })),
  },
  'the fence is the same for every holder': {
    fails: ['lock.fenced'],
    hook: changedLocks((context) => {
      const locks = harnessLocks({ ...context, retryMs: { min: 1, max: 10 } })
      return { withLock: locks.withLock, withLease: (key, fn) => locks.withLease(key, (held) => fn({ ...held, fence: 1 })) }
    }),
  },
}
