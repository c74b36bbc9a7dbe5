import { type AttributeValue, PutItemCommand } from '@aws-sdk/client-dynamodb'
import { HarnessError } from '@tanstack/ai-harness/store'
import { type LogContext, parseSlot, queryBatches, readTail, SPECULATIVE_CLOSES, writeItems } from './batches.js'
import { ATTR, batchSk, deletedSk, FIRST_BATCH_SK, genBounds } from './keys.js'
import { isConditionFailed } from './transient.js'

/** Tries to close a log that keeps growing under the delete before giving up. */
const CLOSE_ROUNDS = 32

/**
 * Deletes a session's log so that it stays deleted. DynamoDB cannot check a second item
 * when it writes one, so the guard sits on the slots themselves:
 *
 * 1. **Close** the live generation: first a small `deleted` item for it (readers holding
 *    records of it check that before they hand them out), then a close tombstone on the
 *    slot right after its last batch, written only if that slot is free. From then on no
 *    append can land in the generation: every slot a writer could know (seq 1, every
 *    batch's first seq, the tail) is taken.
 * 2. **Erase** every batch of this and earlier generations: each is overwritten by an
 *    erased item with the same key and count and no records, so a stale writer aiming at
 *    any of those slots still collides, and the data is gone.
 *
 * A writer appending back to back always knows the next tail before this does (it learns
 * it from its own write), so after the first lost round a round also puts close
 * tombstones on the next few slots at once: the writer's next batch starts at one of
 * them unless it holds that many records, and a tail read tells which closed it.
 * Those past the closing slot are harmless: no writer can reach them.
 *
 * The next log of the id starts in the next generation at seq 1. Safe to repeat, and to
 * run twice at once (both erase; one close wins and the other sees it). Returns the
 * generation a new log starts in.
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
    if (tail.next === 1) {
      live = tail.gen
      break
    }
    await putItem(ctx, { [ATTR.pk]: { S: pk }, [ATTR.sk]: { S: deletedSk(tail.gen) } })
    const slots = Array.from({ length: round === 0 ? 1 : SPECULATIVE_CLOSES }, (_, i) => tail.next + i)
    const won = await Promise.all(slots.map((seq) => putClose(ctx, pk, batchSk(tail.gen, seq))))
    if (won[0]) live = tail.gen + 1
    // Otherwise the next round's tail read says whether a slot further on closed it.
  }
  if (live > 0) await eraseBatches(ctx, pk, live - 1)
  ctx.tails.set(logId, { gen: live, next: 1 })
  ctx.ahead.forget(logId)
  return live
}

/** Writes a close tombstone on a free slot; false when an item (an append, another delete's tombstone) holds it. */
async function putClose(ctx: LogContext, pk: string, sk: string): Promise<boolean> {
  try {
    await putItem(ctx, { [ATTR.pk]: { S: pk }, [ATTR.sk]: { S: sk }, [ATTR.tombstone]: { BOOL: true } }, 'attribute_not_exists(#pk)')
    return true
  } catch (error) {
    if (isConditionFailed(error)) return false
    throw error
  }
}

function putItem(ctx: LogContext, item: Record<string, AttributeValue>, condition?: string): Promise<unknown> {
  return ctx.send((client, { abortSignal }) =>
    client.send(
      new PutItemCommand({
        TableName: ctx.tableName,
        Item: item,
        ...(condition ? { ConditionExpression: condition, ExpressionAttributeNames: { '#pk': ATTR.pk } } : {}),
      }),
      { abortSignal },
    ),
  )
}

/** Overwrites every batch of generations `0..lastGen` with an erased item (keys-only query, then 25 per BatchWriteItem). */
async function eraseBatches(ctx: LogContext, pk: string, lastGen: number): Promise<void> {
  let startKey: Record<string, AttributeValue> | undefined
  do {
    const out = await queryBatches(ctx, pk, { from: FIRST_BATCH_SK, to: genBounds(lastGen).to, forward: true, records: false, startKey })
    const erased = (out.Items ?? [])
      .map(parseSlot)
      .flatMap((slot) =>
        slot.kind === 'batch'
          ? [{ [ATTR.pk]: { S: pk }, [ATTR.sk]: { S: slot.sk }, [ATTR.tombstone]: { BOOL: true }, [ATTR.count]: { N: String(slot.count) } }]
          : [],
      )
    await writeItems(
      ctx,
      erased.map((Item) => ({ PutRequest: { Item } })),
    )
    startKey = out.LastEvaluatedKey
  } while (startKey)
}
