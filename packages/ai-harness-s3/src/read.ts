import { assertLogId, HarnessError, type LogEntry, type ReadOptions } from '@tanstack/ai-harness/store'
import { isTombstone, type ListedSlot, listSlots } from './batches.js'
import type { LogContext } from './context.js'
import { mapBounded } from './objects.js'
import type { ReadPoint } from './read-points.js'
import { startAt } from './read-start.js'

/**
 * A read fetches batches in parallel windows of at most this many listed bytes (and at least
 * one batch): small batches still go eight at a time, but a page of large batches does not
 * download seven more objects than it needs.
 */
const READ_WINDOW_BYTES = 256 * 1024
/**
 * Bytes of batch bodies a reader paging on keeps downloading ahead of the page it serves:
 * enough that a page's next batch has arrived by the time the page before is folded.
 */
const READ_AHEAD_BYTES = 2 * 1024 * 1024

/**
 * Entries with `seq > after`, at most `limit`. A page that follows the previous page of
 * this instance starts from its read point (see `ReadPoint`): a full read of a log lists
 * its keys about once and downloads and parses each batch once. Every page still makes
 * at least one request that would show a delete (a listing, a GET, or else one HEAD), so
 * a log deleted before the read began never comes back from what the instance holds.
 */
export async function readLog(ctx: LogContext, logId: string, options: ReadOptions = {}): Promise<LogEntry[]> {
  assertLogId(logId, ctx.limits)
  const after = Math.max(0, Math.floor(options.after ?? 0))
  const limit = options.limit ?? Number.POSITIVE_INFINITY
  if (limit <= 0) return []
  for (let attempt = 0; ; attempt++) {
    const entries = await readOnce(ctx, logId, after, limit)
    if (entries) return entries
    // A batch vanished or changed between the listing and the fetch: a delete ran.
    if (attempt >= 2) {
      throw new HarnessError('STORE_UNAVAILABLE', `Log ${JSON.stringify(logId)} kept changing under a read. Read it again.`)
    }
  }
}

async function readOnce(ctx: LogContext, logId: string, after: number, limit: number): Promise<LogEntry[] | undefined> {
  const known = ctx.points.take(logId, after + 1)
  const point = known ?? (await startAt(ctx, logId, after, limit))
  if (point === 'end') return []
  if (!point) return undefined
  // A reader paging on: keep the next batches downloading while this page is served and
  // folded, and send the request that shows a delete now, beside them, not after them.
  const sent = known ? fetchAhead(ctx, point, READ_AHEAD_BYTES) : []
  const probe = known ? probeOf(ctx, point, limit, sent.at(-1)) : undefined
  // A start listed the log in this call, which shows whether it was deleted.
  let checked = known === undefined
  // A listing of this call reached the end: it shows every append that resolved before the
  // read began, and listing on would only chase writers that keep appending.
  let endSeen = checked && point.listedToEnd
  const entries: LogEntry[] = []
  let last: ListedSlot | undefined
  while (entries.length < limit) {
    const held = point.held[0]
    if (held) {
      const { batch, slot } = held
      const end = batch.seq + batch.count
      // Locals, not the point's fields, in the loop that runs once per entry of a long read.
      const from = point.next
      const to = Math.min(end, from + (limit - entries.length))
      const { records } = batch
      for (let seq = from; seq < to; seq++) entries.push({ seq, record: records[seq - batch.seq]! })
      if (to > from) last = slot
      point.next = Math.max(from, to)
      if (point.next >= end) {
        point.held.shift()
        ctx.caches.noteConsumed(logId, point.gen, slot, end - 1)
      }
      continue
    }
    if (point.queued === 0) {
      const listed = endSeen ? 0 : await listOn(ctx, logId, point, limit - entries.length)
      if (listed === undefined) return undefined
      checked = true
      endSeen = point.listedToEnd
      if (listed === 0) {
        primeTail(ctx, logId, point)
        break
      }
    }
    const fetched = await fetchWindow(ctx, point, limit - entries.length)
    if (fetched === undefined) return undefined
    checked ||= fetched
  }
  // A page served from what earlier pages fetched: one GET or HEAD, sent after the read began,
  // shows a batch of the log is still there as it was (a delete overwrites every batch with a
  // tombstone, which has another ETag, before it resolves).
  if (!checked && last) {
    const seen = (await probe) ?? { slot: last, now: await ctx.io.head(last.key) }
    if (seen.now?.etag !== seen.slot.etag || seen.now.size === 0) return undefined
  }
  // Half the read-ahead: the next page's start sends the rest, and one of those GETs is then
  // that page's delete check, so it needs no HEAD of its own.
  if (entries.length >= limit && (known || heldEntries(point) < limit)) fetchAhead(ctx, point, READ_AHEAD_BYTES / 2)
  ctx.points.put(logId, point)
  return entries
}

/**
 * Lists the log on after the point's last listed key into its queue: the number of
 * slots found (0: the log ends there), or `undefined` when the listing shows the
 * generation closed by a delete.
 */
async function listOn(ctx: LogContext, logId: string, point: ReadPoint, wanted: number): Promise<number | undefined> {
  const listed = await listSlots(ctx.io, ctx.keys, logId, point.listedTo, wanted + 1)
  if (listed.some((slot) => isTombstone(slot) || slot.gen !== point.gen)) return undefined
  point.enqueue(listed)
  point.listedToEnd = listed.complete === true
  return listed.length
}

/**
 * Fetches the next window of queued batches into the point's held ones: whether a GET of
 * this call fetched one (it then shows the log as it is now), or `undefined` when a batch
 * is a tombstone now or does not follow the one before (a delete ran).
 */
async function fetchWindow(ctx: LogContext, point: ReadPoint, wanted: number): Promise<boolean | undefined> {
  // Every batch holds at least one record: never fetch more batches than records still wanted,
  // and never more bytes than a window (one batch at least).
  const window = point.dequeue(windowSize(point.nextQueued(ctx.readConcurrency), Math.min(ctx.readConcurrency, wanted)))
  const fetched = await mapBounded(window, ctx.readConcurrency, (slot) => {
    const ahead = point.ahead.get(slot.key)
    point.ahead.delete(slot.key)
    return ctx.caches.fetch(slot, ahead)
  })
  let fresh = false
  for (const [i, got] of fetched.entries()) {
    if (!got) return undefined
    const { batch } = got
    // Batches are dense: each starts where the one before ended; the first one a start
    // fetches holds the page's first seq, or ends before it when the log does.
    if (point.end === undefined ? batch.seq > point.next : batch.seq !== point.end) return undefined
    point.end = batch.seq + batch.count
    point.lastSlot = window[i]
    point.held.push({ slot: window[i]!, batch })
    fresh ||= got.fresh
  }
  return fresh
}

/** How many queued slots from the first fit in one read window, at least one and at most `most`. */
function windowSize(queue: readonly ListedSlot[], most: number): number {
  let size = 1
  let bytes = queue[0]?.size ?? 0
  while (size < most && size < queue.length && bytes + queue[size]!.size <= READ_WINDOW_BYTES) {
    bytes += queue[size]!.size
    size++
  }
  return size
}

/**
 * Keeps the next queued batches downloading, up to `budget` bytes (one batch at least,
 * `readConcurrency` at most), for a reader paging on, so it does not wait for each download
 * in turn: the slots whose GET it sent now. A body is used only under the ETag listed for it.
 */
function fetchAhead(ctx: LogContext, point: ReadPoint, budget: number): ListedSlot[] {
  const sent: ListedSlot[] = []
  let bytes = 0
  for (const slot of point.nextQueued(ctx.readConcurrency)) {
    if (bytes > 0 && bytes + slot.size > budget) break
    bytes += slot.size
    if (point.ahead.has(slot.key) || ctx.caches.hasBody(slot)) continue
    point.ahead.set(
      slot.key,
      ctx.io.get(slot.key).catch(() => undefined),
    )
    sent.push(slot)
  }
  return sent
}

/**
 * The request that shows a delete for a page from what the point holds, sent at the read's
 * start: the GET of `fetching` when the page sent one ahead (its ETag and body show the batch
 * as it is now), else a HEAD of the batch the page starts in (or the next one queued); none
 * when the page has to list (the listing shows a delete).
 */
function probeOf(ctx: LogContext, point: ReadPoint, limit: number, fetching: ListedSlot | undefined): Promise<Probed> | undefined {
  if (heldEntries(point) + queuedEntries(point) < limit) return undefined
  const slot = fetching ?? point.held[0]?.slot ?? point.nextQueued(1)[0]
  if (!slot) return undefined
  const ahead = fetching && point.ahead.get(fetching.key)
  const probed = ahead
    ? // A failed GET (caught to undefined, as a 404 is) falls back to a HEAD.
      ahead.then(async (stored) => ({ slot, now: stored ? { etag: stored.etag, size: stored.body.length } : await ctx.io.head(slot.key) }))
    : ctx.io.head(slot.key).then((now) => ({ slot, now }))
  // Awaited when the page needs it (its failure is then the read's); ignored when a listing or GET of the page shows a delete instead.
  probed.catch(() => undefined)
  return probed
}

/** What a HEAD or GET sent during a read showed of a listed batch. */
interface Probed {
  readonly slot: ListedSlot
  readonly now: { etag: string; size: number } | undefined
}

/**
 * About how many entries the queued batches hold, from their listed sizes at the held
 * batches' records per byte (each batch holds one at least): a page that needs more than
 * the point holds and has queued will list, and that listing shows a delete.
 */
function queuedEntries(point: ReadPoint): number {
  const queued = point.nextQueued(point.queued)
  let records = 0
  let bytes = 0
  for (const { slot, batch } of point.held) {
    records += batch.count
    bytes += slot.size
  }
  if (bytes === 0) return queued.length > 0 ? Number.POSITIVE_INFINITY : 0
  return queued.reduce((sum, slot) => sum + Math.max(1, Math.floor((slot.size * records) / bytes)), 0)
}

/** Entries the point's held batches still have to return. */
function heldEntries(point: ReadPoint): number {
  return point.held.reduce((sum, { batch }) => sum + batch.seq + batch.count - Math.max(point.next, batch.seq), 0)
}

/** A read that reached the log's end primes the tail: the next append is one PUT. */
function primeTail(ctx: LogContext, logId: string, point: ReadPoint): void {
  if (point.end === undefined || !point.lastSlot) return
  ctx.caches.tails.set(logId, { gen: point.gen, batch: point.lastSlot.batch, nextSeq: point.end, etag: point.lastSlot.etag })
}
