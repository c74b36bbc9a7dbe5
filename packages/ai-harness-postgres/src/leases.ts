/** Leases: acquire, renew, release, each one statement that compares against the store's time. */
import {
  assertLogId,
  checkLease,
  checkLeaseTtl,
  checkOwner,
  type Lease,
  LeaseHeldError,
  LeaseLostError,
  type LeaseStore,
} from '@tanstack/ai-harness/store'
import type { StoreContext } from './context.js'
import type { Row } from './driver-types.js'

export function leaseStore(ctx: StoreContext): LeaseStore {
  const { driver, sql, limits } = ctx
  const toLease = (logId: string, owner: string, row: Row): Lease => ({
    logId,
    owner,
    fence: Number(row.fence),
    expiresAt: Number(row.expires_at),
  })

  return {
    async acquire(logId, owner, ttlMs) {
      assertLogId(logId, limits)
      checkOwner(owner)
      const ttl = Math.ceil(checkLeaseTtl(ttlMs))
      const [row] = await ctx.run('lease acquire', () => driver.query(sql.acquireLease, [logId, owner, ctx.clockParam(), ttl]))
      if (row) return toLease(logId, owner, row)
      const [holder] = await ctx.run('lease acquire', () => driver.query(sql.leaseExpiry, [logId])).catch(() => [])
      throw new LeaseHeldError(logId, holder ? Number(holder.expires_at) : undefined)
    },
    async renew(lease, ttlMs) {
      const { logId, owner, fence } = checkLease(lease, limits)
      const ttl = Math.ceil(checkLeaseTtl(ttlMs))
      const [row] = await ctx.run('lease renew', () => driver.query(sql.renewLease, [logId, owner, fence, ctx.clockParam(), ttl]))
      if (!row) throw new LeaseLostError(logId)
      return { ...lease, expiresAt: Number(row.expires_at) }
    },
    async release(lease) {
      const { logId, owner, fence } = checkLease(lease, limits)
      const [row] = await ctx.run('lease release', () => driver.query(sql.releaseLease, [logId, owner, fence]))
      if (!row) throw new LeaseLostError(logId, 'is no longer held by this owner, so it was not released')
    },
  }
}
