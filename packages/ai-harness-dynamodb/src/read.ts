import { type AttributeValue, GetItemCommand } from '@aws-sdk/client-dynamodb'
import { assertLogId, HarnessError, type LogEntry, type ReadOptions } from '@tanstack/ai-harness/store'
import { type BatchSlot, type LogContext, parseSlot, queryBatches, readTail, recordsOf, SPECULATIVE_CLOSES } from './batches.js'
import type { PendingBatch } from './caches.js'
import { ATTR, batchSk, deletedSk, genBounds } from './keys.js'

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

/** Collects one page from batches in seq order, keeping what does not fit for the next page. */
class PageBuilder {
  readonly entries: LogEntry[] = []
  readonly spare: PendingBatch[] = []
  /** The seq the next batch must start at. */
  next: number

  constructor(
    private readonly after: number,
    private readonly limit: number,
    start: number,
  ) {
    this.next = start
  }

  get full(): boolean {
    return this.entries.length >= this.limit
  }

  add(batch: PendingBatch): void {
    let i = Math.max(0, this.after + 1 - batch.first)
    for (; i < batch.records.length && this.entries.length < this.limit; i++) {
      this.entries.push({ seq: batch.first + i, record: batch.records[i]! })
    }
    if (i < batch.records.length) this.spare.push(batch)
    this.next = batch.first + batch.records.length
  }

  /** The seq after the last entry returned. */
  get end(): number {
    return (this.entries.at(-1)?.seq ?? this.after) + 1
  }
}

/**
 * One read in generation `gen`; `undefined` when the generation turns out deleted (then
 * nothing read from it is returned). Where the page starts decides the requests:
 *
 * - where the previous page of this instance ended, with records it fetched past its end:
 *   those records, and one small GetItem (was the generation deleted?) when they fill the
 *   page, else forward queries for the rest;
 * - where the previous page ended at a batch end, or at seq 1: forward queries from there;
 * - anywhere else: one reverse query for the batch holding `after + 1`, then forward.
 */
async function readGeneration(ctx: LogContext, logId: string, gen: number, after: number, limit: number): Promise<LogEntry[] | undefined> {
  const pk = ctx.keys.pk(logId)
  const bounds = genBounds(gen)
  const point = ctx.ahead.at(logId, gen, after + 1)
  const page = new PageBuilder(after, limit, after + 1)
  if (point && point.batches.length > 0) {
    page.entries.push(...ctx.ahead.take(logId, limit))
    page.next = point.next
    // A page served from held records alone asks whether the generation was deleted since;
    // one that goes on reading learns it from the items it meets (see the loop below).
    if (page.full) return (await isDeleted(ctx, pk, gen)) ? undefined : page.entries
  } else if (!point && after > 0) {
    // Newest first from after+1: the batch holding it, behind any close tombstones a delete left.
    const newest = (limit: number) =>
      queryBatches(ctx, pk, { from: bounds.from, to: batchSk(gen, after + 1), forward: false, limit, records: true })
    let items = (await newest(1)).Items ?? []
    if (items[0] && parseSlot(items[0]).kind === 'close') items = (await newest(SPECULATIVE_CLOSES + 2)).Items ?? []
    const slots = items.map(parseSlot)
    if (slots.length === 0) return []
    const index = slots.findIndex((slot) => slot.kind !== 'close')
    const found = slots[index]
    if (found?.kind !== 'batch') return undefined
    const end = found.first + found.count
    // A close tombstone right after it: the generation was deleted there.
    if (slots.slice(0, index).some((slot) => slot.first === end)) return undefined
    ctx.tails.note(logId, { gen, next: end })
    // The last batch starting at or before after+1 ends at or before `after`: the log ends there.
    if (end <= after + 1) return []
    page.add(pendingOf(items[index]!, found))
  }

  const from = batchSk(gen, page.next)
  let startKey: Record<string, AttributeValue> | undefined
  let ended = false
  while (!page.full && !ended) {
    // Each batch holds at least one record, so `limit - have` items are always enough.
    const wanted = limit - page.entries.length
    const out = await queryBatches(ctx, pk, {
      from,
      to: bounds.to,
      forward: true,
      limit: Number.isFinite(wanted) ? wanted : undefined,
      records: true,
      startKey,
    })
    for (const item of out.Items ?? []) {
      const slot = parseSlot(item)
      if (slot.kind === 'close') {
        // Inside a batch: a delete's guess at a slot, not a boundary. At the next boundary:
        // the generation is closed, deleted. Past it: nothing lands there, the log ends.
        if (slot.first < page.next) continue
        if (slot.first === page.next) return undefined
        ended = true
        break
      }
      // An erased batch: the generation was deleted, and nothing of it may be returned.
      if (slot.kind === 'erased') return undefined
      // Batches are contiguous; anything else means the partition was written outside this store.
      if (slot.first !== page.next) {
        throw new HarnessError(
          'SESSION_CORRUPT',
          `Log ${JSON.stringify(logId)} has a gap or overlap at seq ${page.next}; restore it from a backup.`,
        )
      }
      page.add(pendingOf(item, slot))
      ctx.tails.note(logId, { gen, next: page.next })
    }
    startKey = out.LastEvaluatedKey
    if (!startKey) break
  }
  ctx.ahead.keep(logId, { gen, next: page.end, batches: page.spare })
  return page.entries
}

function pendingOf(item: Record<string, AttributeValue>, slot: BatchSlot): PendingBatch {
  return { sk: slot.sk, first: slot.first, records: recordsOf(item, slot), bytes: item[ATTR.records]?.S?.length ?? 0 }
}

/** True when `delete` began on generation `gen`: one consistent GetItem of a small item. */
async function isDeleted(ctx: LogContext, pk: string, gen: number): Promise<boolean> {
  const out = await ctx.send((client, { abortSignal }) =>
    client.send(
      new GetItemCommand({
        TableName: ctx.tableName,
        Key: { [ATTR.pk]: { S: pk }, [ATTR.sk]: { S: deletedSk(gen) } },
        ConsistentRead: true,
        ProjectionExpression: '#sk',
        ExpressionAttributeNames: { '#sk': ATTR.sk },
      }),
      { abortSignal },
    ),
  )
  return out.Item !== undefined
}
