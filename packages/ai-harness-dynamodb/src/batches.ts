import {
  type AttributeValue,
  BatchWriteItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb'
import { HarnessError, type LogRecord, type StoreLimits } from '@tanstack/ai-harness/store'
import type { ReadAhead, TailCache } from './caches.js'
import { ATTR, FIRST_BATCH_SK, type KeyLayout, LAST_BATCH_SK, numberAttr, slotOf, stringAttr, type Tail } from './keys.js'
import type { Send } from './send.js'

/** What the log operations share. */
export interface LogContext {
  readonly tableName: string
  readonly keys: KeyLayout
  readonly limits: StoreLimits
  readonly send: Send
  readonly tails: TailCache
  readonly ahead: ReadAhead
}

/**
 * One item of a batch slot:
 * - `batch`: records `first … first + count - 1`;
 * - `erased`: a batch `delete` overwrote; it keeps the count, not the records;
 * - `close`: a tombstone `delete` put on a free slot so no append can land there. At the
 *   slot right after the last batch it closes the generation; `delete` may also put
 *   some a few slots further (see `delete.ts`), which then sit inside or past batches.
 */
export type Slot = BatchSlot | ErasedSlot | CloseSlot

interface SlotKey {
  readonly sk: string
  readonly gen: number
  readonly first: number
}
export interface BatchSlot extends SlotKey {
  readonly kind: 'batch'
  readonly count: number
}
export interface ErasedSlot extends SlotKey {
  readonly kind: 'erased'
  readonly count: number
}
export interface CloseSlot extends SlotKey {
  readonly kind: 'close'
}

export function parseSlot(item: Record<string, AttributeValue>): Slot {
  const sk = stringAttr(item, ATTR.sk)
  const { gen, first } = slotOf(sk)
  const tombstone = item[ATTR.tombstone]?.BOOL === true
  if (tombstone && item[ATTR.count] === undefined) return { kind: 'close', sk, gen, first }
  const count = numberAttr(item, ATTR.count)
  return tombstone ? { kind: 'erased', sk, gen, first, count } : { kind: 'batch', sk, gen, first, count }
}

/** The records of a batch item (queried with records), parsed. */
export function recordsOf(item: Record<string, AttributeValue>, batch: BatchSlot): LogRecord[] {
  let records: unknown
  try {
    records = JSON.parse(stringAttr(item, ATTR.records))
  } catch (error) {
    records = error
  }
  if (!Array.isArray(records) || records.length !== batch.count) {
    throw new HarnessError(
      'SESSION_CORRUPT',
      `The batch item ${batch.sk} does not hold ${batch.count} records as JSON; was the table written outside this store?`,
    )
  }
  return records as LogRecord[]
}

export interface BatchQuery {
  from: string
  to: string
  forward: boolean
  limit?: number
  /** With the records (`r`), or keys and counts only. */
  records: boolean
  startKey?: Record<string, AttributeValue>
}

/** A strongly consistent query over batch slots of one partition. */
export function queryBatches(ctx: Pick<LogContext, 'tableName' | 'send'>, pk: string, q: BatchQuery): Promise<QueryCommandOutput> {
  return ctx.send((client, { abortSignal }) =>
    client.send(
      new QueryCommand({
        TableName: ctx.tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: {
          '#pk': ATTR.pk,
          '#sk': ATTR.sk,
          '#n': ATTR.count,
          '#t': ATTR.tombstone,
          ...(q.records ? { '#r': ATTR.records } : {}),
        },
        ExpressionAttributeValues: { ':pk': { S: pk }, ':from': { S: q.from }, ':to': { S: q.to } },
        ProjectionExpression: q.records ? '#sk, #n, #t, #r' : '#sk, #n, #t',
        ScanIndexForward: q.forward,
        ConsistentRead: true,
        Limit: q.limit,
        ExclusiveStartKey: q.startKey,
      }),
      { abortSignal },
    ),
  )
}

/** Close tombstones `delete` may put at once past the tail; a tail read looks past twice as many. */
export const SPECULATIVE_CLOSES = 8

/**
 * The live generation and next free seq, from the last items of the partition: one
 * strongly consistent query for the last item, keys and counts only (a second for a few
 * more when the last is a close tombstone). The last batch gives the tail; the
 * generation is closed (deleted) when a close tombstone holds the slot right after it,
 * or when its last batch is erased; the live one is then the next, still empty.
 */
export async function readTail(ctx: LogContext, logId: string): Promise<Tail> {
  const pk = ctx.keys.pk(logId)
  const last = (limit: number) => queryBatches(ctx, pk, { from: FIRST_BATCH_SK, to: LAST_BATCH_SK, forward: false, limit, records: false })
  let slots = ((await last(1)).Items ?? []).map(parseSlot)
  // Behind a close tombstone (a deleted generation, or a delete under way) look further.
  if (slots[0]?.kind === 'close') slots = ((await last(2 * SPECULATIVE_CLOSES + 2)).Items ?? []).map(parseSlot)
  const tail = tailOf(slots)
  ctx.tails.set(logId, tail)
  return tail
}

/** The tail from the last slots of a partition, newest first. */
export function tailOf(newestFirst: readonly Slot[]): Tail {
  const index = newestFirst.findIndex((slot) => slot.kind !== 'close')
  if (index === -1) return newestFirst[0] ? { gen: newestFirst[0].gen + 1, next: 1 } : { gen: 0, next: 1 }
  const last = newestFirst[index]!
  if (last.kind !== 'batch') return { gen: last.gen + 1, next: 1 }
  const next = last.first + last.count
  const closed = newestFirst.slice(0, index).some((slot) => slot.gen === last.gen && slot.first === next)
  return closed ? { gen: last.gen + 1, next: 1 } : { gen: last.gen, next }
}

/** Puts or deletes items, 25 per BatchWriteItem, re-sending what DynamoDB left unprocessed. */
export async function writeItems(ctx: Pick<LogContext, 'tableName' | 'send'>, requests: WriteRequest[]): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending = requests.slice(i, i + 25)
    await ctx.send(async (client, { abortSignal }) => {
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [ctx.tableName]: pending } }), { abortSignal })
      const left = out.UnprocessedItems?.[ctx.tableName] ?? []
      if (left.length > 0) {
        pending = left
        // Unprocessed items are DynamoDB throttling part of the batch: back off and send the rest.
        throw Object.assign(new Error('BatchWriteItem left items unprocessed'), { name: 'ThrottlingException' })
      }
    })
  }
}

/** Deletes items by key (namespace cleanup). */
export function deleteKeys(ctx: Pick<LogContext, 'tableName' | 'send'>, keys: Record<string, AttributeValue>[]): Promise<void> {
  return writeItems(
    ctx,
    keys.map((Key) => ({ DeleteRequest: { Key } })),
  )
}
