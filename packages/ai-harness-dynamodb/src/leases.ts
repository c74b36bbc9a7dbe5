import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb'
import {
  assertLogId,
  checkLease,
  checkOwner,
  type Clock,
  type Lease,
  leaseExpiry,
  LeaseHeldError,
  LeaseLostError,
  type LeaseStore,
  type StoreLimits,
  EXPIRY_ONLY_LEASE_MS,
} from '@tanstack/ai-harness/store'
import { ATTR, type KeyLayout, LEASE_SK, numberAttr } from './keys.js'
import type { Send } from './send.js'
import { isConditionFailed } from './transient.js'

export interface LeaseContext {
  readonly tableName: string
  readonly keys: KeyLayout
  readonly limits: StoreLimits
  readonly send: Send
  readonly clock: Clock
}

const NAMES = { '#o': ATTR.owner, '#f': ATTR.fence, '#x': ATTR.expiresAt, '#h': ATTR.held }
// DynamoDB refuses names an expression does not use.
const { '#x': _expiry, ...RELEASE_NAMES } = NAMES

// long: the three lease calls share the key and the attribute names, and each is one conditional UpdateItem
/**
 * Leases as one item per session, changed only by conditional UpdateItem calls, so
 * DynamoDB decides every race. The item outlives a release (`h` = false) to keep the
 * fence counter: the next lease's fence is `ADD f 1`, strictly greater than any before.
 */
export function dynamoLeases(ctx: LeaseContext): LeaseStore & { end(logId: string): Promise<void> } {
  const key = (logId: string) => ({ [ATTR.pk]: { S: ctx.keys.pk(logId) }, [ATTR.sk]: { S: LEASE_SK } })

  return {
    // Expiry is all this store has: a short lease, safe within the clock skew it assumes.
    defaultLeaseMs: EXPIRY_ONLY_LEASE_MS,
    async acquire(logId, owner, ttlMs) {
      assertLogId(logId, ctx.limits)
      checkOwner(owner)
      const now = ctx.clock.now()
      const expiresAt = leaseExpiry(now, ttlMs)
      try {
        const out = await ctx.send((client, { abortSignal }) =>
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
            { abortSignal },
          ),
        )
        return { logId, owner, fence: numberAttr(out.Attributes, ATTR.fence), expiresAt }
      } catch (error) {
        // The holder's expiry, so a waiting worker can try again at that moment (one read, on this path only).
        if (isConditionFailed(error)) throw new LeaseHeldError(logId, await heldUntil(logId).catch(() => undefined))
        throw error
      }
    },

    async renew(lease, ttlMs) {
      checkLease(lease, ctx.limits)
      const now = ctx.clock.now()
      const expiresAt = leaseExpiry(now, ttlMs)
      try {
        await ctx.send((client, { abortSignal }) =>
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
            { abortSignal },
          ),
        )
        return { ...lease, expiresAt }
      } catch (error) {
        if (isConditionFailed(error)) throw new LeaseLostError(lease.logId)
        throw error
      }
    },

    async release(lease) {
      checkLease(lease, ctx.limits)
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
            { abortSignal: attempt.abortSignal },
          )
        } catch (error) {
          if (!isConditionFailed(error)) throw error
          // A retry whose first try landed finds the lease already released by us: that is success.
          if (attempt.number > 0 && (await releasedBy(lease))) return
          throw new LeaseLostError(lease.logId, 'is no longer held by this owner, so it was not released')
        }
      })
    },

    /**
     * For `delete`: ends whoever holds the lease (their renew and release meet LEASE_LOST)
     * and drops the owner, but keeps the item's fence, so the next lease of the id still
     * gets a greater fence than every lease before.
     */
    async end(logId) {
      try {
        await ctx.send((client, { abortSignal }) =>
          client.send(
            new UpdateItemCommand({
              TableName: ctx.tableName,
              Key: key(logId),
              ConditionExpression: 'attribute_exists(#f)',
              UpdateExpression: 'SET #h = :no REMOVE #o, #x',
              ExpressionAttributeNames: NAMES,
              ExpressionAttributeValues: { ':no': { BOOL: false } },
            }),
            { abortSignal },
          ),
        )
      } catch (error) {
        // No lease item: nobody ever leased the session, there is nothing to end.
        if (!isConditionFailed(error)) throw error
      }
    },
  }

  /** When the lease of `logId` expires, if someone holds it. */
  async function heldUntil(logId: string): Promise<number | undefined> {
    const out = await ctx.send((client, { abortSignal }) =>
      client.send(new GetItemCommand({ TableName: ctx.tableName, Key: key(logId), ConsistentRead: true }), { abortSignal }),
    )
    return out.Item?.[ATTR.held]?.BOOL === true ? numberAttr(out.Item, ATTR.expiresAt) : undefined
  }

  async function releasedBy(lease: Lease): Promise<boolean> {
    const out = await ctx.send((client, { abortSignal }) =>
      client.send(new GetItemCommand({ TableName: ctx.tableName, Key: key(lease.logId), ConsistentRead: true }), { abortSignal }),
    )
    const item = out.Item
    return item?.[ATTR.held]?.BOOL === false && item[ATTR.fence]?.N === String(lease.fence) && item[ATTR.owner]?.S === lease.owner
  }
}
