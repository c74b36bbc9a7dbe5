import { type AttributeValue, DeleteItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb'
import {
  assertLogId,
  checkCount,
  checkDuration,
  checkTime,
  type Clock,
  compareWakeups,
  type StoreLimits,
  timeAfter,
  WAITING_FOR_PERSON,
  type Wakeup,
  type WakeupStore,
} from '@tanstack/ai-harness/store'
import { ATTR, type KeyLayout, numberAttr, stringAttr, WAKEUP_INDEX, WAKEUP_SK } from './keys.js'
import type { Send } from './send.js'
import { isConditionFailed } from './transient.js'

export interface WakeupContext {
  readonly tableName: string
  readonly keys: KeyLayout
  readonly limits: StoreLimits
  readonly send: Send
  readonly clock: Clock
}

interface DueCandidate extends Wakeup {
  readonly pk: string
}

/**
 * Wakeups as one item per session (`sk = wakeup`) that also sits in the `wakeups`
 * index under the namespace's partition, sorted by due time: `due` and `claim` query
 * the index (`at <= now`), never scan. The index is eventually consistent, so `claim`
 * takes each wakeup with a conditional update on the base item (`at` unchanged since
 * we saw it): two workers never take the same wakeup, even on a stale index page.
 */
export function dynamoWakeups(ctx: WakeupContext): WakeupStore {
  return {
    async schedule(logId, at) {
      assertLogId(logId, ctx.limits)
      checkTime(at, 'A wakeup time')
      const pk = ctx.keys.pk(logId)
      await ctx.send((client, { abortSignal }) =>
        client.send(
          new PutItemCommand({
            TableName: ctx.tableName,
            Item: {
              ...key(pk),
              [ATTR.wakeupPartition]: { S: ctx.keys.wakeupPartition },
              [ATTR.wakeupAt]: { N: String(at) },
              // A session waiting for a person is also listed in the sessions index.
              ...(at === WAITING_FOR_PERSON ? { [ATTR.listPartition]: { S: ctx.keys.waitingPartition }, [ATTR.listId]: { S: logId } } : {}),
            },
          }),
          { abortSignal },
        ),
      )
    },

    async cancel(logId) {
      assertLogId(logId, ctx.limits)
      const pk = ctx.keys.pk(logId)
      await ctx.send((client, { abortSignal }) =>
        client.send(new DeleteItemCommand({ TableName: ctx.tableName, Key: key(pk) }), { abortSignal }),
      )
    },

    async due(wanted) {
      const limit = checkCount(wanted, "due's limit")
      if (limit === 0) return []
      const due: Wakeup[] = []
      for await (const page of dueCandidates(ctx, ctx.clock.now(), limit)) {
        for (const { logId, at } of page) if (due.length < limit) due.push({ logId, at })
        if (due.length >= limit) break
      }
      return due
    },

    async claim(wanted, holdMs) {
      const limit = checkCount(wanted, "claim's limit")
      const hold = checkDuration(holdMs, 'holdMs')
      if (limit === 0) return []
      const now = ctx.clock.now()
      // A hold past the latest time a store keeps hides the wakeup until then.
      const until = timeAfter(now, hold)
      const claimed: Wakeup[] = []
      for await (const page of dueCandidates(ctx, now, limit)) {
        // Claim in the page's order, a few at a time, never more than still wanted.
        for (let i = 0; i < page.length && claimed.length < limit; ) {
          const chunk = page.slice(i, i + (limit - claimed.length))
          i += chunk.length
          const won = await Promise.all(chunk.map((candidate) => take(ctx, candidate, until)))
          chunk.forEach((candidate, j) => {
            if (won[j]) claimed.push({ logId: candidate.logId, at: candidate.at })
          })
        }
        if (claimed.length >= limit) break
      }
      return claimed.sort(compareWakeups)
    },
  }
}

/** The key of a session's wakeup item. */
const key = (pk: string) => ({ [ATTR.pk]: { S: pk }, [ATTR.sk]: { S: WAKEUP_SK } })

/** The due wakeups from the index, a page at a time, ordered by `compareWakeups` within each page. */
async function* dueCandidates(ctx: WakeupContext, now: number, pageSize: number): AsyncGenerator<DueCandidate[]> {
  let startKey: Record<string, AttributeValue> | undefined
  do {
    const out = await ctx.send((client, { abortSignal }) =>
      client.send(
        new QueryCommand({
          TableName: ctx.tableName,
          IndexName: WAKEUP_INDEX,
          KeyConditionExpression: '#wk = :wk AND #at <= :now',
          ExpressionAttributeNames: { '#wk': ATTR.wakeupPartition, '#at': ATTR.wakeupAt },
          ExpressionAttributeValues: { ':wk': { S: ctx.keys.wakeupPartition }, ':now': { N: String(now) } },
          ScanIndexForward: true,
          Limit: pageSize,
          ExclusiveStartKey: startKey,
        }),
        { abortSignal },
      ),
    )
    const page = (out.Items ?? []).map((item) => {
      const pk = stringAttr(item, ATTR.pk)
      return { pk, logId: ctx.keys.logIdOf(pk), at: numberAttr(item, ATTR.wakeupAt) }
    })
    // Equal times come back in no promised order; make ties stable by session id.
    page.sort(compareWakeups)
    yield page
    startKey = out.LastEvaluatedKey
  } while (startKey)
}

/** Moves one wakeup to `until` if it is still the one we saw; false when another worker got it. */
async function take(ctx: WakeupContext, candidate: DueCandidate, until: number): Promise<boolean> {
  const token = crypto.randomUUID()
  try {
    await ctx.send((client, attempt) =>
      client.send(
        new UpdateItemCommand({
          TableName: ctx.tableName,
          Key: key(candidate.pk),
          // On a retry our own first try may have landed: our token says so.
          ConditionExpression: attempt.number === 0 ? '#at = :seen' : '#at = :seen OR #c = :token',
          UpdateExpression: 'SET #at = :until, #c = :token',
          ExpressionAttributeNames: { '#at': ATTR.wakeupAt, '#c': ATTR.claimToken },
          ExpressionAttributeValues: { ':seen': { N: String(candidate.at) }, ':until': { N: String(until) }, ':token': { S: token } },
        }),
        { abortSignal: attempt.abortSignal },
      ),
    )
    return true
  } catch (error) {
    if (isConditionFailed(error)) return false
    throw error
  }
}
