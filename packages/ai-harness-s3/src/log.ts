import {
  type AppendResult,
  assertExpectedSeq,
  assertLogId,
  HarnessError,
  type LogEntry,
  LogConflictError,
  type LogRecord,
  prepareBatch,
  type ReadOptions,
  type StoreLimits,
} from '@tanstack/ai-harness/store'
import type { KeyLayout } from './keys.js'
import { type Listed, mapBounded, type ObjectIO, type StoredText } from './objects.js'

/** What a batch object says about itself. Its records follow in the same body. */
interface BatchMeta {
  readonly seq: number
  readonly count: number
}

interface Batch extends BatchMeta {
  readonly records: LogRecord[]
}

/** The last batch of a log as this instance last saw it; batch 0 is an empty log. */
interface Tail {
  readonly batch: number
  readonly nextSeq: number
  readonly etag: string | undefined
}

interface ListedBatch extends Listed {
  readonly batch: number
}

/** Entries each cache keeps, so a long-lived process does not grow without bound. */
const CACHE_ENTRIES = 10_000
/** Batch bodies kept for re-reads: at most 256 of at most 64 KiB each, 16 MiB in all. */
const BODY_CACHE_ENTRIES = 256
const BODY_CACHE_MAX_CHARS = 64 * 1024
/** Larger bodies: only the last few, at most 4 of at most the store's batch limit (1 MiB by default). */
const LARGE_BODY_CACHE_ENTRIES = 4
/**
 * A read fetches batches in parallel windows of at most this many listed bytes (and at least
 * one batch): small batches still go eight at a time, but a page of large batches does not
 * download seven more objects than it needs.
 */
const READ_WINDOW_BYTES = 256 * 1024

/** A Map that forgets its oldest entries past `max`: the caches only save requests. */
function boundedMap<K, V>(max: number): Map<K, V> {
  const map = new Map<K, V>()
  const set = map.set.bind(map)
  map.set = (key, value) => {
    map.delete(key)
    set(key, value)
    if (map.size > max) map.delete(map.keys().next().value as K)
    return map
  }
  return map
}

/** One batch object's body: its first seq and its records, in the JSON text prepareBatch checked. */
function batchBody(seq: number, json: readonly string[]): string {
  return `{"seq":${seq},"records":[${json.join(',')}]}`
}

function parseBatch(body: string, key: string): Batch {
  const parsed = JSON.parse(body) as { seq?: unknown; records?: unknown }
  if (typeof parsed.seq !== 'number' || !Array.isArray(parsed.records)) {
    throw new HarnessError(
      'SESSION_CORRUPT',
      `Object ${key} is not a log batch. Remove objects that other programs wrote under the store's prefix.`,
    )
  }
  return { seq: parsed.seq, count: parsed.records.length, records: parsed.records as LogRecord[] }
}

/**
 * The session logs. Batch `n` of a log is written with `If-None-Match: *` by a writer that
 * has seen batch `n-1` end just before its expected seq, so batch numbers are dense and
 * every writer of one position races for one key: exactly one wins, and a retried batch
 * that already landed finds its key taken (a conflict, never a second copy).
 */
export function logStore(io: ObjectIO, keys: KeyLayout, limits: StoreLimits, readConcurrency: number) {
  // Per instance, per log: the tail (so the hot path is one PUT) and what each batch
  // object holds, keyed by key and checked against the listed ETag before use.
  const tails = boundedMap<string, Tail>(CACHE_ENTRIES)
  const metas = boundedMap<string, BatchMeta & { etag: string }>(CACHE_ENTRIES)
  const bodies = boundedMap<string, StoredText>(BODY_CACHE_ENTRIES)
  // The few large batches read last: a paged read of big batches meets the batch holding a
  // page's first seq twice (end of one page, start of the next); without this it downloads it twice.
  const largeBodies = boundedMap<string, StoredText>(LARGE_BODY_CACHE_ENTRIES)
  // Per log: the last batch a read consumed whole, so the next page lists from there, not
  // from the start (a paged read of a long log would otherwise list it once per page).
  const readHints = boundedMap<string, { batch: number; etag: string; end: number }>(CACHE_ENTRIES)

  async function listBatches(logId: string, startAfter?: string): Promise<ListedBatch[]> {
    const found: ListedBatch[] = []
    for await (const page of io.list(keys.logPrefix(logId), startAfter)) {
      for (const item of page) {
        const batch = keys.batchOf(logId, item.key)
        if (batch !== undefined) found.push({ ...item, batch })
      }
    }
    return found
  }

  async function fetchBatch(item: ListedBatch): Promise<Batch | undefined> {
    const cached = bodies.get(item.key) ?? largeBodies.get(item.key)
    // Batch objects never change in place, so a body under the listed ETag is current.
    // Kept as text and parsed per read: callers may mutate what they get.
    const stored = cached && cached.etag === item.etag ? cached : await io.get(item.key)
    if (!stored) return undefined
    const batch = parseBatch(stored.body, item.key)
    metas.set(item.key, { seq: batch.seq, count: batch.count, etag: stored.etag })
    if (stored.body.length <= BODY_CACHE_MAX_CHARS) bodies.set(item.key, stored)
    else largeBodies.set(item.key, stored)
    return batch
  }

  async function metaOf(item: ListedBatch): Promise<BatchMeta | undefined> {
    const known = metas.get(item.key)
    if (known && known.etag === item.etag) return known
    return fetchBatch(item)
  }

  /** Finds the log's real tail: lists from the cached tail (or the start) and reads the last batch. */
  async function readTail(logId: string, cached: Tail | undefined): Promise<Tail> {
    const from = cached && cached.batch > 1 ? keys.batch(logId, cached.batch - 1) : undefined
    const listed = await listBatches(logId, from)
    if (from !== undefined && !listed.some((item) => item.batch === cached!.batch && item.etag === cached!.etag)) {
      // The cached batch is gone or was rewritten (the log was deleted and begun again).
      return readTail(logId, undefined)
    }
    const last = listed[listed.length - 1]
    if (!last) return { batch: 0, nextSeq: 1, etag: undefined }
    const meta = await metaOf(last)
    if (!meta) return readTail(logId, undefined)
    return { batch: last.batch, nextSeq: meta.seq + meta.count, etag: last.etag }
  }

  async function append(logId: string, expectedSeq: number, records: readonly LogRecord[]): Promise<AppendResult> {
    assertLogId(logId, limits)
    assertExpectedSeq(expectedSeq)
    const prepared = prepareBatch(records, limits)
    if (prepared.json.length === 0) return { nextSeq: expectedSeq }
    // The cached tail is only where listing starts: the log may have been deleted (and begun
    // again) by another instance since, and a PUT of the next batch would then land in the
    // emptied log. So the tail is listed again for every append.
    const tail = await readTail(logId, tails.get(logId))
    tails.set(logId, tail)
    if (tail.nextSeq !== expectedSeq) throw new LogConflictError(logId, expectedSeq, tail.nextSeq)
    const batch = tail.batch + 1
    const key = keys.batch(logId, batch)
    const body = batchBody(expectedSeq, prepared.json)
    const written = await io.putIfAbsent(key, body)
    if (!written) {
      // Another writer took this position (or an earlier try of this very batch did).
      tails.delete(logId)
      let actual: number | undefined
      try {
        const fresh = await readTail(logId, tail)
        tails.set(logId, fresh)
        actual = fresh.nextSeq
      } catch {
        // The conflict stands; only its detail is missing.
      }
      throw new LogConflictError(logId, expectedSeq, actual)
    }
    const nextSeq = expectedSeq + prepared.json.length
    if (body.length <= BODY_CACHE_MAX_CHARS) bodies.set(key, { body, etag: written.etag })
    tails.set(logId, { batch, nextSeq, etag: written.etag })
    metas.set(key, { seq: expectedSeq, count: prepared.json.length, etag: written.etag })
    return { nextSeq }
  }

  async function read(logId: string, options: ReadOptions = {}): Promise<LogEntry[]> {
    assertLogId(logId, limits)
    const after = Math.max(0, Math.floor(options.after ?? 0))
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    if (limit <= 0) return []
    for (let attempt = 0; ; attempt++) {
      const entries = await readOnce(logId, after, limit)
      if (entries) return entries
      // A batch vanished or changed between the listing and the fetch: a delete ran.
      if (attempt >= 2) {
        throw new HarnessError('STORE_UNAVAILABLE', `Log ${JSON.stringify(logId)} kept changing under a read. Read it again.`)
      }
    }
  }

  /** The batches that may hold seqs after `after`, and the last seq before the first of them. */
  async function batchesFrom(logId: string, after: number): Promise<{ listed: ListedBatch[]; before: number }> {
    const hint = readHints.get(logId)
    if (hint && hint.end <= after && hint.batch > 1) {
      const listed = await listBatches(logId, keys.batch(logId, hint.batch - 1))
      // The hinted batch must still be there, unchanged; else the log was deleted and begun again.
      if (listed[0]?.batch === hint.batch && listed[0].etag === hint.etag) return { listed: listed.slice(1), before: hint.end }
    }
    return { listed: await listBatches(logId), before: 0 }
  }

  async function readOnce(logId: string, after: number, limit: number): Promise<LogEntry[] | undefined> {
    const { listed, before } = await batchesFrom(logId, after)
    if (listed.length === 0) {
      if (before === 0) tails.set(logId, { batch: 0, nextSeq: 1, etag: undefined })
      return []
    }
    // The first batch that ends past `after`. Batch i (0-based) of the listing starts at seq
    // >= before+i+1, so it is at index <= after-before; metas are cached, so this is cheap.
    let lo = 0
    let hi = Math.max(0, Math.min(listed.length - 1, after - before))
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      const meta = await metaOf(listed[mid]!)
      if (!meta) return undefined
      if (meta.seq + meta.count - 1 > after) hi = mid
      else lo = mid + 1
    }
    const entries: LogEntry[] = []
    let expected: number | undefined
    for (let start = lo; start < listed.length && entries.length < limit; ) {
      // Every batch holds at least one record: never fetch more batches than records still wanted,
      // and never more bytes than a window (one batch at least).
      const most = Math.max(1, Math.min(readConcurrency, limit - entries.length))
      let size = 1
      let bytes = listed[start]!.size
      while (size < most && start + size < listed.length && bytes + listed[start + size]!.size <= READ_WINDOW_BYTES) {
        bytes += listed[start + size]!.size
        size++
      }
      const window = listed.slice(start, start + size)
      start += size
      const batches = await mapBounded(window, readConcurrency, fetchBatch)
      for (const [i, batch] of batches.entries()) {
        if (!batch) return undefined
        if (expected !== undefined && batch.seq !== expected) return undefined
        expected = batch.seq + batch.count
        batch.records.forEach((record, i) => {
          const seq = batch.seq + i
          if (seq > after && entries.length < limit) entries.push({ seq, record })
        })
        const end = batch.seq + batch.count - 1
        if (end <= (entries.at(-1)?.seq ?? after)) readHints.set(logId, { batch: window[i]!.batch, etag: window[i]!.etag, end })
      }
      const last = listed[listed.length - 1]!
      // A read that reached the end primes the tail: the next append is one PUT.
      if (start >= listed.length && expected !== undefined) tails.set(logId, { batch: last.batch, nextSeq: expected, etag: last.etag })
    }
    return entries
  }

  /** Deletes the log's batches, newest first, so an interrupted delete leaves a shorter valid log. */
  async function deleteLog(logId: string): Promise<void> {
    tails.delete(logId)
    readHints.delete(logId)
    const listed = await listBatches(logId)
    for (const item of listed) {
      metas.delete(item.key)
      bodies.delete(item.key)
      largeBodies.delete(item.key)
    }
    const newestFirst = listed.map((item) => item.key).reverse()
    for (let i = 0; i < newestFirst.length; i += 1000) await io.deleteMany(newestFirst.slice(i, i + 1000))
  }

  return { append, read, deleteLog }
}
