import { type AttributeValue, PutItemCommand } from '@aws-sdk/client-dynamodb'
import { HarnessError } from '@tanstack/ai-harness'
import { type LogContext, parseSlot, queryBatches, readTail, writeItems } from './batches.js'
import { ATTR, batchSk, FIRST_BATCH_SK, genBounds } from './keys.js'
import { isConditionFailed } from './transient.js'

/** Tries to close a log that keeps growing under the delete before giving up. */
const CLOSE_ROUNDS = 32

/**
 * Deletes a session's log so that it stays deleted. DynamoDB cannot check a second item
 * when it writes one, so the guard sits on the slots themselves:
 *
 * 1. **Close** the live generation: a tombstone on the slot right after its last batch,
 *    written only if that slot is free. If an append took it first, read the tail again
 *    and close after that one. From here on no append can land in this generation: every
 *    slot a writer could know (seq 1, every batch's first seq, the tail) is taken.
 * 2. **Erase** every batch of this and earlier generations: each is overwritten by a
 *    tombstone with the same key and no records, so a stale writer aiming at any of
 *    those slots still collides, and the data is gone.
 *
 * The next log of the id starts in the next generation at seq 1. Safe to repeat, and to
 * run twice at once (both erase; only one close wins, the other sees the tombstone).
 * Returns the generation a new log starts in.
 */
export async function deleteLog(ctx: LogContext, logId: string): Promise<number> {
  ctx.ahead.forget(logId)
  const pk = ctx.keys.pk(logId)
  let live: number | undefined
  for (let round = 0; live === undefined; round++) {
    if (round >= CLOSE_ROUNDS) {
      throw new HarnessError(
        'STORE_UNAVAILABLE',
        `Log ${JSON.stringify(logId)} kept growing under delete (${CLOSE_ROUNDS} tries). Stop its writers, then delete again.`,
      )
    }
    const tail = await readTail(ctx, logId)
    // An empty live generation has nothing to close; earlier ones are closed already.
    if (tail.next === 1) live = tail.gen
    else if (await putTombstone(ctx, pk, batchSk(tail.gen, tail.next))) live = tail.gen + 1
  }
  if (live > 0) await eraseBatches(ctx, pk, live - 1)
  ctx.tails.set(logId, { gen: live, next: 1 })
  ctx.ahead.forget(logId)
  return live
}

/** Writes a tombstone on a free slot; false when an item (an append, another delete's tombstone) holds it. */
async function putTombstone(ctx: LogContext, pk: string, sk: string): Promise<boolean> {
  try {
    await ctx.send((client, { abortSignal }) =>
      client.send(
        new PutItemCommand({
          TableName: ctx.tableName,
          Item: tombstone(pk, sk),
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': ATTR.pk },
        }),
        { abortSignal },
      ),
    )
    return true
  } catch (error) {
    if (isConditionFailed(error)) return false
    throw error
  }
}

/** Overwrites every batch of generations `0..lastGen` with a tombstone (keys-only query, then 25 per BatchWriteItem). */
async function eraseBatches(ctx: LogContext, pk: string, lastGen: number): Promise<void> {
  let startKey: Record<string, AttributeValue> | undefined
  do {
    const out = await queryBatches(ctx, pk, { from: FIRST_BATCH_SK, to: genBounds(lastGen).to, forward: true, records: false, startKey })
    const batches = (out.Items ?? []).map(parseSlot).filter((slot) => slot.kind === 'batch')
    await writeItems(
      ctx,
      batches.map((slot) => ({ PutRequest: { Item: tombstone(pk, slot.sk) } })),
    )
    startKey = out.LastEvaluatedKey
  } while (startKey)
}

function tombstone(pk: string, sk: string): Record<string, AttributeValue> {
  return { [ATTR.pk]: { S: pk }, [ATTR.sk]: { S: sk }, [ATTR.tombstone]: { BOOL: true } }
}
