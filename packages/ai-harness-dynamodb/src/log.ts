import { BatchWriteItemCommand, PutItemCommand, QueryCommand, type AttributeValue, type QueryCommandOutput } from '@aws-sdk/client-dynamodb'
import {
  assertExpectedSeq,
  assertLogId,
  type AppendResult,
  HarnessError,
  type LogEntry,
  LogConflictError,
  type LogRecord,
  prepareBatch,
  type ReadOptions,
  type StoreLimits,
} from '@tanstack/ai-harness/store'
import { ATTR, batchSk, FIRST_BATCH_SK, firstSeqOf, type KeyLayout, LAST_BATCH_SK, numberAttr, stringAttr } from './keys.js'
import { type Send, isConditionFailed } from './transient.js'

/** What the log operations share. */
export interface LogContext {
  readonly tableName: string
  readonly keys: KeyLayout
  readonly limits: StoreLimits
  readonly send: Send
  readonly tails: TailCache
}

/**
 * Where this instance last saw a log end. A value `s` means "some batch ends at
 * `s - 1`", a fact that never changes while the log exists (batches are immutable),
 * so an append at `s` can go straight to one conditional PutItem: if the log has
 * moved on, a batch already starts at `s` and the condition fails.
 */
export class TailCache {
  readonly #tails = new Map<string, number>()
  constructor(private readonly maxLogs = 10_000) {}

  get(logId: string): number | undefined {
    return this.#tails.get(logId)
  }

  /** Records the log's next free seq as of a tail read or our own append. */
  set(logId: string, nextSeq: number): void {
    this.#tails.delete(logId)
    this.#tails.set(logId, nextSeq)
    // Oldest first in a Map: drop the least recently written log when full.
    if (this.#tails.size > this.maxLogs) this.#tails.delete(this.#tails.keys().next().value!)
  }

  /** Records a batch boundary seen while reading; keeps the furthest one. */
  note(logId: string, boundary: number): void {
    if ((this.#tails.get(logId) ?? 0) < boundary) this.set(logId, boundary)
  }

  forget(logId: string): void {
    this.#tails.delete(logId)
  }
}

interface BatchItem {
  readonly first: number
  readonly count: number
  readonly records?: LogRecord[]
}

function parseBatch(item: Record<string, AttributeValue>, withRecords: boolean): BatchItem {
  const first = firstSeqOf(stringAttr(item, ATTR.sk))
  const count = numberAttr(item, ATTR.count)
  if (!withRecords) return { first, count }
  return { first, count, records: JSON.parse(stringAttr(item, ATTR.records)) as LogRecord[] }
}

/**
 * Appends a batch as ONE item keyed by its first seq, written only if no item has
 * that key. The writer first makes sure `expectedSeq` is a batch boundary (the log's
 * tail, or a boundary this instance saw); two writers at one boundary then collide on
 * DynamoDB's condition, and a writer aiming inside an earlier batch (6 when a batch
 * holds 5-7) never gets to write, because no batch ends at 5.
 */
export async function appendBatch(
  ctx: LogContext,
  logId: string,
  expectedSeq: number,
  records: readonly LogRecord[],
): Promise<AppendResult> {
  assertLogId(logId, ctx.limits)
  assertExpectedSeq(expectedSeq)
  const pk = ctx.keys.pk(logId)
  const batch = prepareBatch(records, ctx.limits)
  if (batch.json.length === 0) return { nextSeq: expectedSeq }

  // Seq 1 is always a boundary. Any other seq must be the log's tail right now: a boundary
  // this instance saw (its tail cache) is gone once another instance deleted the log, and a
  // PutItem there would land in the emptied partition, so it is read again every time.
  if (expectedSeq !== 1) {
    const tail = await readTail(ctx, pk)
    ctx.tails.set(logId, tail)
    if (tail !== expectedSeq) throw new LogConflictError(logId, expectedSeq, tail)
  }

  const item: Record<string, AttributeValue> = {
    [ATTR.pk]: { S: pk },
    [ATTR.sk]: { S: batchSk(expectedSeq) },
    [ATTR.count]: { N: String(batch.json.length) },
    // JSON text, not DynamoDB maps and numbers: those would change 2^53, 5e-324 and "\u0000".
    [ATTR.records]: { S: `[${batch.json.join(',')}]` },
  }
  try {
    // A retry after a lost response meets its own item here and fails the condition,
    // so an ambiguous failure surfaces as a conflict, never as a second copy.
    await ctx.send((client) =>
      client.send(
        new PutItemCommand({
          TableName: ctx.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': ATTR.pk },
        }),
      ),
    )
  } catch (error) {
    if (!isConditionFailed(error)) throw error
    ctx.tails.forget(logId)
    const actual = await readTail(ctx, pk).catch(() => undefined)
    if (actual !== undefined) ctx.tails.set(logId, actual)
    throw new LogConflictError(logId, expectedSeq, actual, { cause: error })
  }
  const nextSeq = expectedSeq + batch.json.length
  ctx.tails.set(logId, nextSeq)
  return { nextSeq }
}

/** The log's next free seq, from its last batch: one strongly consistent query. */
async function readTail(ctx: LogContext, pk: string): Promise<number> {
  const out = await queryBatches(ctx, pk, { from: FIRST_BATCH_SK, to: LAST_BATCH_SK, forward: false, limit: 1, records: false })
  const last = out.Items?.[0]
  if (!last) return 1
  const { first, count } = parseBatch(last, false)
  return first + count
}

interface BatchQuery {
  from: string
  to: string
  forward: boolean
  limit?: number
  records: boolean
  startKey?: Record<string, AttributeValue>
}

function queryBatches(ctx: LogContext, pk: string, q: BatchQuery): Promise<QueryCommandOutput> {
  return ctx.send((client) =>
    client.send(
      new QueryCommand({
        TableName: ctx.tableName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: {
          '#pk': ATTR.pk,
          '#sk': ATTR.sk,
          '#n': ATTR.count,
          ...(q.records ? { '#r': ATTR.records } : {}),
        },
        ExpressionAttributeValues: { ':pk': { S: pk }, ':from': { S: q.from }, ':to': { S: q.to } },
        ProjectionExpression: q.records ? '#sk, #n, #r' : '#sk, #n',
        ScanIndexForward: q.forward,
        ConsistentRead: true,
        Limit: q.limit,
        ExclusiveStartKey: q.startKey,
      }),
    ),
  )
}

/**
 * Entries with `seq > after`, at most `limit`, from strongly consistent queries.
 * With `after > 0`, one reverse query finds the batch holding `after + 1` (the last
 * batch that starts at or before it), then forward pages follow `LastEvaluatedKey`.
 */
export async function readEntries(ctx: LogContext, logId: string, options: ReadOptions = {}): Promise<LogEntry[]> {
  assertLogId(logId, ctx.limits)
  const pk = ctx.keys.pk(logId)
  const after = Math.max(0, Math.floor(options.after ?? 0))
  // DynamoDB takes whole numbers only; round up as a slice by `after + limit` would.
  const limit = options.limit === undefined ? undefined : Math.ceil(options.limit)
  if (limit !== undefined && !(limit > 0)) return []

  const entries: LogEntry[] = []
  // The seq the next batch must start at, once the first batch is in.
  let expected: number | undefined
  const take = (batch: BatchItem) => {
    // Batches are contiguous; anything else means the partition was written outside this store.
    if (expected === undefined ? batch.first > after + 1 : batch.first !== expected) {
      throw new HarnessError(
        'SESSION_CORRUPT',
        `Log ${JSON.stringify(logId)} has a gap or overlap at seq ${expected ?? after + 1}; restore it from a backup.`,
      )
    }
    batch.records!.forEach((record, i) => {
      const seq = batch.first + i
      if (seq > after && (limit === undefined || entries.length < limit)) entries.push({ seq, record })
    })
    expected = batch.first + batch.count
    ctx.tails.note(logId, expected)
  }

  let from = batchSk(1)
  if (after > 0) {
    const out = await queryBatches(ctx, pk, { from: FIRST_BATCH_SK, to: batchSk(after + 1), forward: false, limit: 1, records: true })
    const item = out.Items?.[0]
    if (!item) return []
    const batch = parseBatch(item, true)
    // The last batch starting at or before after+1 ends at or before `after`: the log ends there.
    if (batch.first + batch.count <= after + 1) {
      ctx.tails.note(logId, batch.first + batch.count)
      return []
    }
    take(batch)
    from = batchSk(batch.first + 1)
  }

  let startKey: Record<string, AttributeValue> | undefined
  while (limit === undefined || entries.length < limit) {
    // Each batch holds at least one record, so `limit - have` items are always enough.
    const out = await queryBatches(ctx, pk, {
      from,
      to: LAST_BATCH_SK,
      forward: true,
      limit: limit === undefined ? undefined : limit - entries.length,
      records: true,
      startKey,
    })
    for (const item of out.Items ?? []) take(parseBatch(item, true))
    startKey = out.LastEvaluatedKey
    if (!startKey) break
  }
  return entries
}

/** Every key of a session's partition: its batches, lease and wakeup. */
export async function deletePartition(ctx: Pick<LogContext, 'tableName' | 'send'>, pk: string): Promise<void> {
  let startKey: Record<string, AttributeValue> | undefined
  do {
    const out = await ctx.send((client) =>
      client.send(
        new QueryCommand({
          TableName: ctx.tableName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': ATTR.pk, '#sk': ATTR.sk },
          ExpressionAttributeValues: { ':pk': { S: pk } },
          ProjectionExpression: '#pk, #sk',
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      ),
    )
    await deleteKeys(ctx, out.Items ?? [])
    startKey = out.LastEvaluatedKey
  } while (startKey)
}

/** Deletes items by key, 25 per BatchWriteItem, re-sending what DynamoDB left unprocessed. */
export async function deleteKeys(ctx: Pick<LogContext, 'tableName' | 'send'>, keys: Record<string, AttributeValue>[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 25) {
    let pending = keys.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key } }))
    await ctx.send(async (client) => {
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [ctx.tableName]: pending } }))
      const left = out.UnprocessedItems?.[ctx.tableName] ?? []
      if (left.length > 0) {
        pending = left as typeof pending
        // Unprocessed items are DynamoDB throttling part of the batch: back off and send the rest.
        throw Object.assign(new Error('BatchWriteItem left items unprocessed'), { name: 'ThrottlingException' })
      }
    })
  }
}
