import { randomUUID } from 'node:crypto'
import { type AttributeValue, DeleteItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb'
import {
  assertLogId,
  type Clock,
  HarnessError,
  MAX_TIME_MS,
  type StoreLimits,
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

/** A time the store keeps: ms since the epoch in [0, MAX_TIME_MS], fractions kept as they are. */
function assertTime(at: unknown, what: string): asserts at is number {
  if (typeof at !== 'number' || !(at >= 0 && at <= MAX_TIME_MS)) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `${what} must be ms since the epoch between 0 and MAX_TIME_MS (${MAX_TIME_MS}), not ${String(at)}.`,
    )
  }
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
  const key = (pk: string) => ({ [ATTR.pk]: { S: pk }, [ATTR.sk]: { S: WAKEUP_SK } })

  async function* dueCandidates(now: number, pageSize: number): AsyncGenerator<DueCandidate[]> {
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
      page.sort((a, b) => a.at - b.at || (a.logId < b.logId ? -1 : a.logId > b.logId ? 1 : 0))
      yield page
      startKey = out.LastEvaluatedKey
    } while (startKey)
  }

  return {
    async schedule(logId, at) {
      assertLogId(logId, ctx.limits)
      assertTime(at, 'A wakeup time')
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
      const limit = Math.floor(wanted)
      if (!(limit > 0)) return []
      const due: Wakeup[] = []
      for await (const page of dueCandidates(ctx.clock.now(), limit)) {
        for (const { logId, at } of page) if (due.length < limit) due.push({ logId, at })
        if (due.length >= limit) break
      }
      return due
    },

    async claim(wanted, holdMs) {
      const limit = Math.floor(wanted)
      if (!(limit > 0)) return []
      if (typeof holdMs !== 'number' || !Number.isFinite(holdMs) || holdMs < 0) {
        throw new HarnessError('INVALID_ARGUMENT', 'claim needs holdMs >= 0: how long a claimed wakeup stays hidden.')
      }
      const now = ctx.clock.now()
      // A hold past the latest time a store keeps hides the wakeup until then.
      const until = Math.min(MAX_TIME_MS, now + holdMs)
      const claimed: Wakeup[] = []
      for await (const page of dueCandidates(now, limit)) {
        // Claim in the page's order, a few at a time, never more than still wanted.
        for (let i = 0; i < page.length && claimed.length < limit; ) {
          const chunk = page.slice(i, i + (limit - claimed.length))
          i += chunk.length
          const won = await Promise.all(chunk.map((candidate) => take(candidate, until)))
          chunk.forEach((candidate, j) => {
            if (won[j]) claimed.push({ logId: candidate.logId, at: candidate.at })
          })
        }
        if (claimed.length >= limit) break
      }
      return claimed.sort((a, b) => a.at - b.at || (a.logId < b.logId ? -1 : a.logId > b.logId ? 1 : 0))
    },
  }

  /** Moves one wakeup to `until` if it is still the one we saw; false when another worker got it. */
  async function take(candidate: DueCandidate, until: number): Promise<boolean> {
    const token = randomUUID()
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
}
