import { isTombstone, type ListedSlot, listSlots, liveOf } from './batches.js'
import type { LogContext } from './context.js'
import { ReadPoint } from './read-points.js'

/** Batches of the live generation a read may need, from a listing; `complete` when it reached the log's end. */
interface ListedLog {
  readonly gen: number
  readonly listed: ListedSlot[]
  /** The last seq before the first listed batch. */
  readonly before: number
  readonly complete: boolean
}

/**
 * Where a read that no earlier page leads to starts: a read point at `after + 1` from a
 * listing (its first queued batch holds `after + 1`, or is the log's last); `'end'` when
 * the live generation holds no batch from there; `undefined` when a batch changed under
 * the search (a delete ran).
 */
export async function startAt(ctx: LogContext, logId: string, after: number, limit: number): Promise<ReadPoint | 'end' | undefined> {
  const { gen, listed, before, complete } = await batchesFrom(ctx, logId, after, limit)
  if (listed.length === 0) {
    if (before === 0 && complete) ctx.caches.tails.set(logId, { gen, batch: 0, nextSeq: 1, etag: undefined })
    return 'end'
  }
  // The first batch that ends past `after`. Batch i (0-based) of the listing starts at seq
  // >= before+i+1, so it is at index <= after-before; metas are cached, so this is cheap.
  let lo = 0
  let hi = Math.max(0, Math.min(listed.length - 1, after - before))
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    const meta = await ctx.caches.metaOf(listed[mid]!)
    if (!meta) return undefined
    if (meta.seq + meta.count - 1 > after) hi = mid
    else lo = mid + 1
  }
  const point = new ReadPoint(gen, after + 1, listed.slice(lo), listed.at(-1)!.key)
  point.listedToEnd = complete
  return point
}

/**
 * The live generation's batches that may hold seqs after `after` (at most as many as a
 * page of `limit` entries can need), and the last seq before the first of them. A
 * listing cut short cannot show the generation's last key; a tombstone anywhere in it
 * does show a delete, and then the whole log is listed to find the live generation.
 */
async function batchesFrom(ctx: LogContext, logId: string, after: number, limit: number): Promise<ListedLog> {
  const { io, keys } = ctx
  const hint = ctx.caches.hints.get(logId)
  if (hint && hint.end <= after && hint.batch > 1) {
    // This generation from the hinted batch on: no tombstone in it, no later generation.
    const listed = await listSlots(io, keys, logId, keys.batch(logId, hint.gen, hint.batch - 1), 1 + (after - hint.end) + limit + 1)
    const first = listed[0]
    if (first?.gen === hint.gen && first.batch === hint.batch && first.etag === hint.etag && !listed.some(isTombstone)) {
      return { gen: hint.gen, listed: listed.slice(1), before: hint.end, complete: listed.complete === true }
    }
    // The hinted batch is a tombstone now, or gone, or the log was deleted: list it whole.
  }
  const listed = await listSlots(io, keys, logId, undefined, after + limit + 1)
  if (!listed.complete && !listed.some(isTombstone)) return { gen: listed[0]!.gen, listed, before: 0, complete: false }
  const view = liveOf(listed.complete ? listed : await listSlots(io, keys, logId), 0)
  return { gen: view.gen, listed: view.batches, before: 0, complete: true }
}
