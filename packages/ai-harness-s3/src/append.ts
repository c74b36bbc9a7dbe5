import { type AppendResult, LogConflictError, type LogRecord, prepareAppend } from '@tanstack/ai-harness/store'
import { batchBody, listSlots, liveOf, type Tail } from './batches.js'
import type { LogContext } from './context.js'

/**
 * Appends a batch as one object. Batch `n` of a generation is written with
 * `If-None-Match: *` by a writer that has seen batch `n-1` end just before its expected
 * seq, so batch numbers are dense and every writer of one position races for one key:
 * exactly one wins, and a retried batch that already landed finds its key taken (a
 * conflict, never a second copy).
 */
export async function appendLog(ctx: LogContext, logId: string, expectedSeq: number, records: readonly LogRecord[]): Promise<AppendResult> {
  const { io, keys, caches } = ctx
  const prepared = prepareAppend(logId, expectedSeq, records, ctx.limits)
  if (prepared.json.length === 0) return { nextSeq: expectedSeq }
  let tail = caches.tails.get(logId)
  if (!tail || tail.nextSeq !== expectedSeq) {
    tail = await readTail(ctx, logId, tail)
    caches.tails.set(logId, tail)
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
      caches.noteBatch(key, { body, etag: written.etag }, { seq: expectedSeq, count: prepared.json.length })
      caches.tails.set(logId, { gen: tail.gen, batch, nextSeq, etag: written.etag })
      return { nextSeq }
    }
    // Another writer took this position, or an earlier try of this very batch did, or a
    // delete left a tombstone there.
    caches.tails.delete(logId)
    let fresh: Tail | undefined
    try {
      fresh = await readTail(ctx, logId, tail)
      caches.tails.set(logId, fresh)
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

/** Finds the log's real tail: lists from the cached tail (or the start) and reads the last batch. */
async function readTail(ctx: LogContext, logId: string, cached: Tail | undefined): Promise<Tail> {
  const { io, keys } = ctx
  const from = cached && cached.batch > 1 ? keys.batch(logId, cached.gen, cached.batch - 1) : undefined
  const listed = await listSlots(io, keys, logId, from)
  if (from !== undefined && !listed.some((s) => s.gen === cached!.gen && s.batch === cached!.batch && s.etag === cached!.etag)) {
    // The cached batch is a tombstone now, or gone: list the whole log.
    return readTail(ctx, logId, undefined)
  }
  const view = liveOf(listed, cached?.gen ?? 0)
  const last = view.batches.at(-1)
  if (!last) return { gen: view.gen, batch: 0, nextSeq: 1, etag: undefined }
  const meta = await ctx.caches.metaOf(last)
  if (!meta) return readTail(ctx, logId, undefined)
  return { gen: view.gen, batch: last.batch, nextSeq: meta.seq + meta.count, etag: last.etag }
}
