import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb'
import {
  assertLogId,
  type Clock,
  HarnessError,
  type Lease,
  LeaseHeldError,
  LeaseLostError,
  type LeaseStore,
  type StoreLimits,
} from '@tanstack/ai-harness/store'
import { ATTR, type KeyLayout, LEASE_SK, numberAttr } from './keys.js'
import { type Send, isConditionFailed } from './transient.js'

export interface LeaseContext {
  readonly tableName: string
  readonly keys: KeyLayout
  readonly send: Send
  readonly clock: Clock
  readonly limits: StoreLimits
}

const NAMES = { '#o': ATTR.owner, '#f': ATTR.fence, '#x': ATTR.expiresAt, '#h': ATTR.held }
// DynamoDB refuses names an expression does not use.
const { '#x': _expiry, ...RELEASE_NAMES } = NAMES

function assertTtl(ttlMs: unknown): asserts ttlMs is number {
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new HarnessError('INVALID_ARGUMENT', `A lease ttl must be a positive number of ms, not ${String(ttlMs)}.`)
  }
}

/**
 * Leases as one item per session, changed only by conditional UpdateItem calls, so
 * DynamoDB decides every race. The item outlives a release (`h` = false) to keep the
 * fence counter: the next lease's fence is `ADD f 1`, strictly greater than any before.
 */
export function dynamoLeases(ctx: LeaseContext): LeaseStore {
  const key = (logId: string) => ({ [ATTR.pk]: { S: ctx.keys.pk(logId) }, [ATTR.sk]: { S: LEASE_SK } })

  return {
    async acquire(logId, owner, ttlMs) {
      assertLogId(logId, ctx.limits)
      assertTtl(ttlMs)
      if (typeof owner !== 'string' || owner === '') throw new HarnessError('INVALID_ARGUMENT', 'A lease owner must be a non-empty string.')
      const now = ctx.clock.now()
      const expiresAt = now + ttlMs
      try {
        const out = await ctx.send((client) =>
          client.send(
            new UpdateItemCommand({
              TableName: ctx.tableName,
              Key: key(logId),
              // Free, released, expired, or already ours (which also covers our own retry that landed).
              ConditionExpression: 'attribute_not_exists(#h) OR #h = :no OR #x <= :now OR #o = :owner',
              UpdateExpression: 'SET #o = :owner, #x = :exp, #h = :yes ADD #f :one',
              ExpressionAttributeNames: NAMES,
              ExpressionAttributeValues: {
                ':no': { BOOL: false },
                ':yes': { BOOL: true },
                ':now': { N: String(now) },
                ':owner': { S: owner },
                ':exp': { N: String(expiresAt) },
                ':one': { N: '1' },
              },
              ReturnValues: 'ALL_NEW',
            }),
          ),
        )
        return { logId, owner, fence: numberAttr(out.Attributes, ATTR.fence), expiresAt }
      } catch (error) {
        if (isConditionFailed(error)) throw new LeaseHeldError(logId)
        throw error
      }
    },

    async renew(lease, ttlMs) {
      assertTtl(ttlMs)
      const now = ctx.clock.now()
      const expiresAt = now + ttlMs
      try {
        await ctx.send((client) =>
          client.send(
            new UpdateItemCommand({
              TableName: ctx.tableName,
              Key: key(lease.logId),
              ConditionExpression: '#h = :yes AND #f = :fence AND #o = :owner AND #x > :now',
              UpdateExpression: 'SET #x = :exp',
              ExpressionAttributeNames: NAMES,
              ExpressionAttributeValues: {
                ':yes': { BOOL: true },
                ':fence': { N: String(lease.fence) },
                ':owner': { S: lease.owner },
                ':now': { N: String(now) },
                ':exp': { N: String(expiresAt) },
              },
            }),
          ),
        )
        return { ...lease, expiresAt }
      } catch (error) {
        if (isConditionFailed(error)) throw new LeaseLostError(lease.logId)
        throw error
      }
    },

    async release(lease) {
      await ctx.send(async (client, attempt) => {
        try {
          await client.send(
            new UpdateItemCommand({
              TableName: ctx.tableName,
              Key: key(lease.logId),
              ConditionExpression: '#h = :yes AND #f = :fence AND #o = :owner',
              UpdateExpression: 'SET #h = :no',
              ExpressionAttributeNames: RELEASE_NAMES,
              ExpressionAttributeValues: {
                ':yes': { BOOL: true },
                ':no': { BOOL: false },
                ':fence': { N: String(lease.fence) },
                ':owner': { S: lease.owner },
              },
            }),
          )
        } catch (error) {
          if (!isConditionFailed(error)) throw error
          // A retry whose first try landed finds the lease already released by us: that is success.
          if (attempt > 0 && (await releasedBy(lease))) return
          throw new LeaseLostError(lease.logId, 'is no longer held by this owner, so it was not released')
        }
      })
    },
  }

  async function releasedBy(lease: Lease): Promise<boolean> {
    const out = await ctx.send((client) =>
      client.send(new GetItemCommand({ TableName: ctx.tableName, Key: key(lease.logId), ConsistentRead: true })),
    )
    const item = out.Item
    return item?.[ATTR.held]?.BOOL === false && item[ATTR.fence]?.N === String(lease.fence) && item[ATTR.owner]?.S === lease.owner
  }
}
