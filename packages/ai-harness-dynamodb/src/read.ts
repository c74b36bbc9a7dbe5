import type { AttributeValue } from '@aws-sdk/client-dynamodb'
import { assertLogId, HarnessError, type LogEntry, type ReadOptions } from '@tanstack/ai-harness'
import { type LogContext, parseSlot, queryBatches, readTail, recordsOf } from './batches.js'
import type { PendingBatch } from './caches.js'
import { batchSk, genBounds } from './keys.js'

/** A read that finds its generation deleted learns the live one and reads again, this many times. */
const GENERATION_TRIES = 3

/**
 * Entries with `seq > after`, at most `limit`, from strongly consistent queries of the
 * log's live generation. A page may be shorter than `limit` only when the log ends.
 */
export async function readEntries(ctx: LogContext, logId: string, options: ReadOptions = {}): Promise<LogEntry[]> {
  assertLogId(logId, ctx.limits)
  const after = Math.max(0, Math.floor(options.after ?? 0))
  // DynamoDB takes whole numbers only; round up as a slice by `after + limit` would.
  const limit = options.limit === undefined ? Number.POSITIVE_INFINITY : Math.ceil(options.limit)
  if (!(limit > 0)) return []
  for (let tries = 0; tries < GENERATION_TRIES; tries++) {
    const page = await readGeneration(ctx, logId, ctx.tails.genOf(logId), after, limit)
    if (page) return page
    // The generation this instance knew was deleted: find the live one.
    ctx.ahead.forget(logId)
    await readTail(ctx, logId)
  }
  throw new HarnessError('STORE_UNAVAILABLE', `Log ${JSON.stringify(logId)} was deleted again and again under a read. Read it again.`)
}

/**
 * One read in generation `gen`; `undefined` when a tombstone shows the generation was
 * deleted (then nothing read from it is returned). With `after > 0`, one small query
 * (keys and counts only) finds the batch holding `after + 1`; the records come from the
 * read-ahead of the previous page when it starts exactly there, else from forward pages
 * that begin with that batch.
 */
async function readGeneration(ctx: LogContext, logId: string, gen: number, after: number, limit: number): Promise<LogEntry[] | undefined> {
  const pk = ctx.keys.pk(logId)
  const bounds = genBounds(gen)
  const entries: LogEntry[] = []
  /** Seq where the next batch of the forward query must start. */
  let next = 1
  if (after > 0) {
    const out = await queryBatches(ctx, pk, { from: bounds.from, to: batchSk(gen, after + 1), forward: false, limit: 1, records: false })
    const item = out.Items?.[0]
    if (!item) return []
    const slot = parseSlot(item)
    if (slot.kind === 'tombstone') return undefined
    const end = slot.first + slot.count
    ctx.tails.note(logId, { gen, next: end })
    // The last batch starting at or before after+1 ends at or before `after`: the log ends there.
    if (end <= after + 1) return []
    if (ctx.ahead.skAt(logId, gen, after + 1) === slot.sk) {
      const taken = ctx.ahead.take(logId, limit)
      entries.push(...taken.entries)
      if (entries.length >= limit) return entries
      next = taken.next
    } else {
      next = slot.first
    }
  }

  const spare: PendingBatch[] = []
  let spareFrom = 0
  let startKey: Record<string, AttributeValue> | undefined
  do {
    // Each batch holds at least one record, so `limit - have` items are always enough.
    const wanted = limit - entries.length
    const out = await queryBatches(ctx, pk, {
      from: batchSk(gen, next),
      to: bounds.to,
      forward: true,
      limit: Number.isFinite(wanted) ? wanted : undefined,
      records: true,
      startKey,
    })
    for (const item of out.Items ?? []) {
      const slot = parseSlot(item)
      // A tombstone anywhere in the generation: it was deleted, and nothing of it may be returned.
      if (slot.kind === 'tombstone') return undefined
      // Batches are contiguous; anything else means the partition was written outside this store.
      if (slot.first !== next) {
        throw new HarnessError(
          'SESSION_CORRUPT',
          `Log ${JSON.stringify(logId)} has a gap or overlap at seq ${next}; restore it from a backup.`,
        )
      }
      const records = recordsOf(item, slot)
      next = slot.first + slot.count
      ctx.tails.note(logId, { gen, next })
      let i = Math.max(0, after + 1 - slot.first)
      for (; i < records.length && entries.length < limit; i++) entries.push({ seq: slot.first + i, record: records[i]! })
      // What this page fetched but cannot return waits for the next page.
      if (i < records.length) {
        if (spare.length === 0) spareFrom = slot.first + i
        spare.push({ sk: slot.sk, first: slot.first, records })
      }
    }
    startKey = out.LastEvaluatedKey
  } while (startKey && entries.length < limit)
  ctx.ahead.keep(logId, gen, spareFrom, spare)
  return entries
}
