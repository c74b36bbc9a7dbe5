import {
  type AttributeValue,
  BatchWriteItemCommand,
  QueryCommand,
  type QueryCommandOutput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb'
import { HarnessError, type LogRecord, type StoreLimits } from '@tanstack/ai-harness'
import type { ReadAhead, TailCache } from './caches.js'
import { ATTR, FIRST_BATCH_SK, type KeyLayout, LAST_BATCH_SK, numberAttr, slotOf, stringAttr } from './keys.js'
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

/** One item of a batch slot: a batch of records, or the tombstone `delete` left in its place. */
export type Slot =
  | { readonly kind: 'batch'; readonly sk: string; readonly gen: number; readonly first: number; readonly count: number }
  | { readonly kind: 'tombstone'; readonly sk: string; readonly gen: number; readonly first: number }

export type BatchWithRecords = Extract<Slot, { kind: 'batch' }> & { readonly records: LogRecord[] }

export function parseSlot(item: Record<string, AttributeValue>): Slot {
  const sk = stringAttr(item, ATTR.sk)
  const { gen, first } = slotOf(sk)
  if (item[ATTR.tombstone]?.BOOL === true) return { kind: 'tombstone', sk, gen, first }
  return { kind: 'batch', sk, gen, first, count: numberAttr(item, ATTR.count) }
}

/** The records of a batch item (queried with records), parsed. */
export function recordsOf(item: Record<string, AttributeValue>, batch: Extract<Slot, { kind: 'batch' }>): LogRecord[] {
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

/** Where the log of an id is now: its live generation and the next free seq in it. */
export interface Tail {
  readonly gen: number
  readonly next: number
}

/**
 * The live generation and next free seq, from the last batch slot of the partition: one
 * strongly consistent query for one small item. A tombstone there means its generation
 * was deleted, so the live one is the next, still empty.
 */
export async function readTail(ctx: LogContext, logId: string): Promise<Tail> {
  const pk = ctx.keys.pk(logId)
  const out = await queryBatches(ctx, pk, { from: FIRST_BATCH_SK, to: LAST_BATCH_SK, forward: false, limit: 1, records: false })
  const item = out.Items?.[0]
  const slot = item ? parseSlot(item) : undefined
  const tail: Tail =
    slot === undefined
      ? { gen: 0, next: 1 }
      : slot.kind === 'tombstone'
        ? { gen: slot.gen + 1, next: 1 }
        : { gen: slot.gen, next: slot.first + slot.count }
  ctx.tails.set(logId, tail)
  return tail
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
