import { type AttributeValue, PutItemCommand } from '@aws-sdk/client-dynamodb'
import {
  type AppendResult,
  assertExpectedSeq,
  assertLogId,
  LogConflictError,
  type LogRecord,
  prepareBatch,
} from '@tanstack/ai-harness/store'
import { type LogContext, readTail } from './batches.js'
import { ATTR, batchSk } from './keys.js'
import { isConditionFailed } from './transient.js'

/**
 * Appends a batch as ONE item keyed by (generation, first seq), written only if no item
 * holds that slot. The writer first makes sure `expectedSeq` is a batch boundary of the
 * live generation (seq 1, the log's tail, or a boundary this instance saw); two writers
 * at one boundary then collide on DynamoDB's condition, a writer aiming inside an
 * earlier batch (6 when a batch holds 5-7) never gets to write, and a writer that still
 * holds a deleted log collides with the tombstone `delete` left on its slot.
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

  const known = ctx.tails.get(logId)
  let gen: number
  if (expectedSeq === 1) {
    // Seq 1 is a boundary of every generation; a deleted one has a tombstone there.
    gen = known?.gen ?? 0
  } else if (known?.next === expectedSeq) {
    gen = known.gen
  } else {
    const tail = await readTail(ctx, logId)
    if (tail.next !== expectedSeq) throw new LogConflictError(logId, expectedSeq, tail.next)
    gen = tail.gen
  }

  const body = `[${batch.json.join(',')}]`
  for (let attempt = 0; ; attempt++) {
    try {
      await put(ctx, pk, gen, expectedSeq, batch.json.length, body)
      break
    } catch (error) {
      if (!isConditionFailed(error)) throw error
      ctx.tails.forget(logId)
      const actual = await readTail(ctx, logId).catch(() => undefined)
      // The slot was a tombstone of a generation this instance did not know was deleted,
      // and the live generation's next free seq is the expected one: the batch belongs
      // there, as it would for a writer that knew. Once only; anything else is a conflict.
      if (attempt === 0 && actual !== undefined && actual.gen > gen && actual.next === expectedSeq) {
        gen = actual.gen
        continue
      }
      throw new LogConflictError(logId, expectedSeq, actual?.next, { cause: error })
    }
  }
  const nextSeq = expectedSeq + batch.json.length
  ctx.tails.set(logId, { gen, next: nextSeq })
  return { nextSeq }
}

function put(ctx: LogContext, pk: string, gen: number, first: number, count: number, records: string): Promise<unknown> {
  const item: Record<string, AttributeValue> = {
    [ATTR.pk]: { S: pk },
    [ATTR.sk]: { S: batchSk(gen, first) },
    [ATTR.count]: { N: String(count) },
    // JSON text, not DynamoDB maps and numbers: those would change 2^53, 5e-324 and "\u0000".
    [ATTR.records]: { S: records },
  }
  // The first batch lists the log in the sessions index; delete erases it, and the listing with it.
  if (first === 1) {
    item[ATTR.listPartition] = { S: ctx.keys.sessionPartition }
    item[ATTR.listId] = { S: ctx.keys.logIdOf(pk) }
  }
  // A retry after a lost response meets its own item here and fails the condition,
  // so an ambiguous failure surfaces as a conflict, never as a second copy.
  return ctx.send((client, { abortSignal }) =>
    client.send(
      new PutItemCommand({
        TableName: ctx.tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': ATTR.pk },
      }),
      { abortSignal },
    ),
  )
}
