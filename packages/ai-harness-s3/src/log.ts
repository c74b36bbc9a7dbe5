import {
  type AppendResult,
  assertExpectedSeq,
  assertLogId,
  boundedMap,
  HarnessError,
  LogConflictError,
  type LogEntry,
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

/** A listed slot of a log: a batch, or a tombstone (an empty object) that `delete` left. */
interface ListedSlot extends Listed {
  readonly gen: number
  readonly batch: number
}

/** The last batch of a log as this instance last saw it; batch 0 is an empty generation. */
interface Tail {
  readonly gen: number
  readonly batch: number
  readonly nextSeq: number
  readonly etag: string | undefined
}

/** The live generation of a log, from a listing, and its batches (none if it is empty). */
interface LiveView {
  readonly gen: number
  readonly batches: ListedSlot[]
}

/** Batches of the live generation a read may need, from a listing; `complete` when it reached the log's end. */
interface ListedLog {
  readonly gen: number
  readonly listed: ListedSlot[]
  /** The last seq before the first listed batch. */
  readonly before: number
  readonly complete: boolean
}

/** Where the last page of a log ended inside a batch, with that batch's records not returned yet. */
interface HeldBatch {
  readonly gen: number
  readonly batch: number
  readonly etag: string
  readonly first: number
  /** The seq of the first record not returned yet. */
  next: number
  readonly records: LogRecord[]
}

/** Entries each cache keeps, so a long-lived process does not grow without bound. */
const CACHE_ENTRIES = 10_000
/** Batch bodies kept for re-reads: at most 256 of at most 64 KiB each, 16 MiB in all. */
const BODY_CACHE_ENTRIES = 256
const BODY_CACHE_MAX_CHARS = 64 * 1024
/** Logs whose held batch (at most maxBatchBytes, 1 MiB by default) a reader keeps. */
const HELD_BATCHES = 8
/**
 * A read fetches batches in parallel windows of at most this many listed bytes (and at least
 * one batch): small batches still go eight at a time, but a page of large batches does not
 * download seven more objects than it needs.
 */
const READ_WINDOW_BYTES = 256 * 1024
/** When an append keeps winning the tail, `delete` also takes this many batch slots after it at once. */
const SPECULATIVE_CLOSES = 4
/** Rounds of closing a log that keeps growing before `delete` gives up. */
const CLOSE_ROUNDS = 32
/** Tombstones written at once by `delete`. */
const ERASE_CONCURRENCY = 16

/** One batch object's body: its first seq and its records, in the JSON text prepareBatch checked. */
function batchBody(seq: number, json: readonly string[]): string {
  return `{"seq":${seq},"records":[${json.join(',')}]}`
}

/** A batch from its body; `undefined` for a tombstone (an empty body). */
function parseBatch(body: string, key: string): Batch | undefined {
  if (body === '') return undefined
  let parsed: { seq?: unknown; records?: unknown } | undefined
  try {
    parsed = JSON.parse(body) as typeof parsed
  } catch {
    parsed = undefined
  }
  if (typeof parsed?.seq !== 'number' || !Array.isArray(parsed.records)) {
    throw new HarnessError(
      'SESSION_CORRUPT',
      `Object ${key} is not a log batch. Remove objects that other programs wrote under the store's prefix.`,
    )
  }
  return { seq: parsed.seq, count: parsed.records.length, records: parsed.records as LogRecord[] }
}

const isTombstone = (slot: Listed) => slot.size === 0

/**
 * The live generation from a listing that is complete from some slot on: the generation
 * of the last key, unless that key is a tombstone (then that generation was deleted and
 * the next one, still empty, is live). `delete` only ever leaves tombstones as the last
 * slots of a generation (see `deleteLog`), so a generation with one is closed.
 */
function liveOf(listed: readonly ListedSlot[], fallbackGen: number): LiveView {
  const last = listed.at(-1)
  if (!last) return { gen: fallbackGen, batches: [] }
  const batches = listed.filter((slot) => slot.gen === last.gen)
  if (batches.some(isTombstone)) return { gen: last.gen + 1, batches: [] }
  return { gen: last.gen, batches }
}

// long: the log calls share the bounded caches of tails, batch metas and bodies; split pending (the caches as a class of their own)
/**
 * The session logs. Batch `n` of a generation is written with `If-None-Match: *` by a
 * writer that has seen batch `n-1` end just before its expected seq, so batch numbers are
 * dense and every writer of one position races for one key: exactly one wins, and a
 * retried batch that already landed finds its key taken (a conflict, never a second copy).
 * `delete` leaves a tombstone on every slot a writer could know, so a writer that still
 * holds a deleted log collides too; the next log of the id starts in the next generation.
 */
export function logStore(io: ObjectIO, keys: KeyLayout, limits: StoreLimits, readConcurrency: number) {
  // Per instance, per log: the tail (so the hot path is one PUT) and what each batch
  // object holds, keyed by key and checked against the listed ETag before use.
  const tails = boundedMap<string, Tail>(CACHE_ENTRIES)
  const metas = boundedMap<string, BatchMeta & { etag: string }>(CACHE_ENTRIES)
  const bodies = boundedMap<string, StoredText>(BODY_CACHE_ENTRIES)
  // Per log: the last batch a read consumed whole, so the next page lists from there, not
  // from the start (a paged read of a long log would otherwise list it once per page).
  const readHints = boundedMap<string, { gen: number; batch: number; etag: string; end: number }>(CACHE_ENTRIES)
  // Per log: the rest of the batch the last page stopped inside, parsed, so the next page
  // does not download and parse it again (a page holds 1 000 entries, a batch up to 1 MiB).
  const held = boundedMap<string, HeldBatch>(HELD_BATCHES)
  // Per log: the batch after the one the last page stopped inside, already on its way, so a
  // reader paging through big batches does not wait for each download in turn. Used only
  // under the ETag a later listing shows.
  const nextBodies = boundedMap<string, { key: string; body: Promise<StoredText | undefined> }>(HELD_BATCHES)

  /** The log's slots after `startAfter` in key order; `complete` is false when it stopped at `max`. */
  async function listSlots(
    logId: string,
    startAfter?: string,
    max = Number.POSITIVE_INFINITY,
  ): Promise<ListedSlot[] & { complete?: boolean }> {
    const found: ListedSlot[] & { complete?: boolean } = []
    found.complete = true
    for await (const page of io.list(keys.logPrefix(logId), startAfter)) {
      for (const item of page) {
        const slot = keys.slotOf(logId, item.key)
        if (slot !== undefined) found.push({ ...item, ...slot })
      }
      if (found.length >= max) {
        found.complete = false
        break
      }
    }
    return found
  }

  async function fetchBatch(item: ListedSlot): Promise<Batch | undefined> {
    const cached = bodies.get(item.key) ?? (await fetchedAhead(item))
    // Batch objects never change in place but for a tombstone, which has another ETag, so
    // a body under the listed ETag is current. Kept as text and parsed per read: callers
    // may change what they get.
    const stored = cached && cached.etag === item.etag ? cached : await io.get(item.key)
    if (!stored) return undefined
    const batch = parseBatch(stored.body, item.key)
    if (!batch) return undefined
    metas.set(item.key, { seq: batch.seq, count: batch.count, etag: stored.etag })
    if (stored.body.length <= BODY_CACHE_MAX_CHARS) bodies.set(item.key, stored)
    return batch
  }

  /** The body fetched ahead for `item`'s key, if any (it is dropped after this one look). */
  async function fetchedAhead(item: ListedSlot): Promise<StoredText | undefined> {
    for (const [logId, next] of nextBodies) {
      if (next.key !== item.key) continue
      nextBodies.delete(logId)
      return next.body
    }
    return undefined
  }

  /** Starts downloading `item` for the next page of `logId`; a failure only means it is fetched again then. */
  function fetchAhead(logId: string, item: ListedSlot | undefined): void {
    if (!item || bodies.get(item.key)?.etag === item.etag || nextBodies.get(logId)?.key === item.key) return
    nextBodies.set(logId, { key: item.key, body: io.get(item.key).catch(() => undefined) })
  }

  async function metaOf(item: ListedSlot): Promise<BatchMeta | undefined> {
    const known = metas.get(item.key)
    if (known && known.etag === item.etag) return known
    return fetchBatch(item)
  }

  /** Finds the log's real tail: lists from the cached tail (or the start) and reads the last batch. */
  async function readTail(logId: string, cached: Tail | undefined): Promise<Tail> {
    const from = cached && cached.batch > 1 ? keys.batch(logId, cached.gen, cached.batch - 1) : undefined
    const listed = await listSlots(logId, from)
    if (from !== undefined && !listed.some((s) => s.gen === cached!.gen && s.batch === cached!.batch && s.etag === cached!.etag)) {
      // The cached batch is a tombstone now, or gone: list the whole log.
      return readTail(logId, undefined)
    }
    const view = liveOf(listed, cached?.gen ?? 0)
    const last = view.batches.at(-1)
    if (!last) return { gen: view.gen, batch: 0, nextSeq: 1, etag: undefined }
    const meta = await metaOf(last)
    if (!meta) return readTail(logId, undefined)
    return { gen: view.gen, batch: last.batch, nextSeq: meta.seq + meta.count, etag: last.etag }
  }

  async function append(logId: string, expectedSeq: number, records: readonly LogRecord[]): Promise<AppendResult> {
    assertLogId(logId, limits)
    assertExpectedSeq(expectedSeq)
    const prepared = prepareBatch(records, limits)
    if (prepared.json.length === 0) return { nextSeq: expectedSeq }
    let tail = tails.get(logId)
    if (!tail || tail.nextSeq !== expectedSeq) {
      tail = await readTail(logId, tail)
      tails.set(logId, tail)
      if (tail.nextSeq !== expectedSeq) throw new LogConflictError(logId, expectedSeq, tail.nextSeq)
    }
    const body = batchBody(expectedSeq, prepared.json)
    for (let attempt = 0; ; attempt++) {
      const batch = tail.batch + 1
      const key = keys.batch(logId, tail.gen, batch)
      // A log's first batch lists the session: marker first (a crash between the two leaves
      // an extra id, never a missing one), and after this try's look at the tail, so a
      // delete that removed the marker before closing the log cannot remove this one.
      if (expectedSeq === 1) await io.put(keys.session(logId), '')
      const written = await io.putIfAbsent(key, body)
      if (written) {
        const nextSeq = expectedSeq + prepared.json.length
        if (body.length <= BODY_CACHE_MAX_CHARS) bodies.set(key, { body, etag: written.etag })
        tails.set(logId, { gen: tail.gen, batch, nextSeq, etag: written.etag })
        metas.set(key, { seq: expectedSeq, count: prepared.json.length, etag: written.etag })
        return { nextSeq }
      }
      // Another writer took this position, or an earlier try of this very batch did, or a
      // delete left a tombstone there.
      tails.delete(logId)
      let fresh: Tail | undefined
      try {
        fresh = await readTail(logId, tail)
        tails.set(logId, fresh)
      } catch {
        // The conflict stands; only its detail is missing.
      }
      // A generation deleted since this instance last looked: the batch belongs in the live
      // one if its next free seq is the one expected, as for a writer that knew. Once only.
      if (attempt === 0 && fresh && fresh.gen > tail.gen && fresh.nextSeq === expectedSeq) {
        tail = fresh
        continue
      }
      throw new LogConflictError(logId, expectedSeq, fresh?.nextSeq)
    }
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

  /**
   * The live generation's batches that may hold seqs after `after` (at most as many as a
   * page of `limit` entries can need), and the last seq before the first of them. A
   * listing cut short cannot show the generation's last key; a tombstone anywhere in it
   * does show a delete, and then the whole log is listed to find the live generation.
   */
  async function batchesFrom(logId: string, after: number, limit: number): Promise<ListedLog> {
    const hint = readHints.get(logId)
    if (hint && hint.end <= after && hint.batch > 1) {
      // This generation from the hinted batch on: no tombstone in it, no later generation.
      const listed = await listSlots(logId, keys.batch(logId, hint.gen, hint.batch - 1), 1 + (after - hint.end) + limit + 1)
      const first = listed[0]
      if (first?.gen === hint.gen && first.batch === hint.batch && first.etag === hint.etag && !listed.some(isTombstone)) {
        return { gen: hint.gen, listed: listed.slice(1), before: hint.end, complete: listed.complete === true }
      }
      // The hinted batch is a tombstone now, or gone, or the log was deleted: list it whole.
    }
    const listed = await listSlots(logId, undefined, after + limit + 1)
    if (!listed.complete && !listed.some(isTombstone)) return { gen: listed[0]!.gen, listed, before: 0, complete: false }
    const view = liveOf(listed.complete ? listed : await listSlots(logId), 0)
    return { gen: view.gen, listed: view.batches, before: 0, complete: true }
  }

  /**
   * A page that the held rest of a batch fills alone: one HEAD shows the batch is still
   * there as it was (a delete overwrites it with a tombstone, another ETag).
   */
  async function fromHeld(logId: string, after: number, limit: number): Promise<LogEntry[] | undefined> {
    const rest = held.get(logId)
    if (!rest || rest.next !== after + 1 || rest.first + rest.records.length - rest.next < limit) return undefined
    const now = await io.head(keys.batch(logId, rest.gen, rest.batch))
    if (now?.etag !== rest.etag || now.size === 0) {
      held.delete(logId)
      return undefined
    }
    const entries: LogEntry[] = []
    for (; entries.length < limit; rest.next++) entries.push({ seq: rest.next, record: rest.records[rest.next - rest.first]! })
    return entries
  }

  async function readOnce(logId: string, after: number, limit: number): Promise<LogEntry[] | undefined> {
    const fromRest = await fromHeld(logId, after, limit)
    if (fromRest) return fromRest
    const { gen, listed, before, complete } = await batchesFrom(logId, after, limit)
    if (listed.length === 0) {
      if (before === 0 && complete) tails.set(logId, { gen, batch: 0, nextSeq: 1, etag: undefined })
      return []
    }
    const entries: LogEntry[] = []
    let expected: number | undefined
    let lo = 0
    // The rest of the batch the previous page stopped inside, if it is still there as it was.
    const rest = held.get(logId)
    const restAt = rest && rest.gen === gen && rest.next === after + 1 ? listed.findIndex((s) => s.batch === rest.batch) : -1
    if (rest && restAt >= 0 && listed[restAt]!.etag === rest.etag) {
      while (rest.next < rest.first + rest.records.length && entries.length < limit) {
        entries.push({ seq: rest.next, record: rest.records[rest.next - rest.first]! })
        rest.next++
      }
      if (rest.next < rest.first + rest.records.length) return entries
      held.delete(logId)
      noteConsumed(logId, gen, listed[restAt]!, rest.next - 1)
      expected = rest.next
      lo = restAt + 1
    } else {
      // The first batch that ends past `after`. Batch i (0-based) of the listing starts at seq
      // >= before+i+1, so it is at index <= after-before; metas are cached, so this is cheap.
      let hi = Math.max(0, Math.min(listed.length - 1, after - before))
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        const meta = await metaOf(listed[mid]!)
        if (!meta) return undefined
        if (meta.seq + meta.count - 1 > after) hi = mid
        else lo = mid + 1
      }
    }
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
        const had = entries.length
        let index = Math.max(0, after + 1 - batch.seq)
        for (; index < batch.count && entries.length < limit; index++)
          entries.push({ seq: batch.seq + index, record: batch.records[index]! })
        const slot = window[i]!
        if (index === batch.count) noteConsumed(logId, gen, slot, batch.seq + batch.count - 1)
        else if (entries.length > had) {
          // The page ends inside this batch: keep its parsed rest for the next page, and
          // start on the batch after it.
          held.set(logId, { gen, batch: slot.batch, etag: slot.etag, first: batch.seq, next: batch.seq + index, records: batch.records })
          fetchAhead(logId, listed[listed.indexOf(slot) + 1])
        }
      }
      const last = listed[listed.length - 1]!
      // A read that reached the end primes the tail: the next append is one PUT.
      if (complete && start >= listed.length && expected !== undefined)
        tails.set(logId, { gen, batch: last.batch, nextSeq: expected, etag: last.etag })
    }
    return entries
  }

  /** A read returned the batch through `end`: the next page lists from there. */
  function noteConsumed(logId: string, gen: number, slot: ListedSlot, end: number): void {
    readHints.set(logId, { gen, batch: slot.batch, etag: slot.etag, end })
  }

  /**
   * Deletes a log so that it stays deleted. S3 cannot check a second object when it writes
   * one, so the guard sits on the slots themselves:
   *
   * 1. **Close** the live generation: an empty object (a tombstone) on the slot after its
   *    last batch, with `If-None-Match: *`. If an append took that slot first, look again.
   *    A writer appending back to back always learns the next slot before this does, so
   *    after the first lost round a round takes the next few slots at once: the writer can
   *    only write slot n+1 after it wrote slot n, so it wins at most the ones it was
   *    already sending, and the first slot this wins sits right after the writer's last
   *    batch. Tombstones are thus always the last slots of their generation.
   * 2. **Erase** every batch of this and earlier generations: each is overwritten by a
   *    tombstone, so a stale writer aiming at any slot it could know collides, and the
   *    records are gone.
   *
   * The next log of the id starts in the next generation at seq 1. Safe to repeat, and to
   * run twice at once.
   */
  async function deleteLog(logId: string): Promise<void> {
    forget(logId)
    // The listing's marker goes first: a first append that lands after the close below
    // looked at the tail after this, and puts its marker again.
    await io.delete(keys.session(logId))
    let closed: number | undefined
    for (let round = 0; closed === undefined; round++) {
      if (round >= CLOSE_ROUNDS) {
        throw new HarnessError(
          'STORE_UNAVAILABLE',
          `Log ${JSON.stringify(logId)} kept growing under delete (${CLOSE_ROUNDS} tries). Stop its writers, then delete again.`,
        )
      }
      const view = liveOf(await listSlots(logId), 0)
      const last = view.batches.at(-1)
      // An empty live generation has nothing to close; earlier ones are closed already.
      if (!last) {
        closed = view.gen - 1
        break
      }
      const slots = Array.from({ length: round === 0 ? 1 : SPECULATIVE_CLOSES }, (_, i) => last.batch + 1 + i)
      const won = await Promise.all(slots.map((batch) => io.putIfAbsent(keys.batch(logId, view.gen, batch), '')))
      if (won[0]) closed = view.gen
      // Otherwise the next round's listing says whether a slot further on closed it.
    }
    if (closed >= 0) {
      const stale = (await listSlots(logId)).filter((slot) => slot.gen <= closed! && !isTombstone(slot))
      await mapBounded(stale, ERASE_CONCURRENCY, (slot) => io.put(slot.key, ''))
    }
    forget(logId)
  }

  function forget(logId: string): void {
    tails.delete(logId)
    readHints.delete(logId)
    held.delete(logId)
    nextBodies.delete(logId)
  }

  return { append, read, deleteLog }
}
