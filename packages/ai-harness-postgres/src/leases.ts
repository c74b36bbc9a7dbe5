/**
 * Leases: acquire, renew, release, each one statement that compares against the store's
 * time; and the orphans, leases whose holder is provably dead (see `liveness.ts`).
 */
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
import { sqlLimit } from './sql-arguments.js'

export function leaseStore(ctx: StoreContext): LeaseStore & Required<Pick<LeaseStore, 'orphans'>> {
  const { driver, sql, limits, liveness } = ctx
  /** The live holders, where the statement needs them as a parameter. */
  const live = () => (liveness.kind === 'list' ? [liveness.live()] : [])
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
      const holder = await liveness.holder()
      const [row] = await ctx.run('lease acquire', () =>
        driver.query(sql.acquireLease, [logId, owner, ctx.clockParam(), ttl, holder, ...live()]),
      )
      if (row) {
        const lease = toLease(logId, owner, row)
        liveness.took(lease.fence, holder)
        return lease
      }
      const [held] = await ctx.run('lease acquire', () => driver.query(sql.leaseExpiry, [logId])).catch(() => [])
      throw new LeaseHeldError(logId, held ? Number(held.expires_at) : undefined)
    },
    async renew(lease, ttlMs) {
      const { logId, owner, fence } = checkLease(lease, limits)
      const ttl = Math.ceil(checkLeaseTtl(ttlMs))
      if (liveness.lost(fence)) throw lostLiveness(logId)
      const [row] = await ctx.run('lease renew', () => driver.query(sql.renewLease, [logId, owner, fence, ctx.clockParam(), ttl]))
      if (!row) throw new LeaseLostError(logId)
      return { ...lease, expiresAt: Number(row.expires_at) }
    },
    async release(lease) {
      const { logId, owner, fence } = checkLease(lease, limits)
      const [row] = await ctx.run('lease release', () => driver.query(sql.releaseLease, [logId, owner, fence]))
      if (!row) throw new LeaseLostError(logId, 'is no longer held by this owner, so it was not released')
    },
    async orphans(limit) {
      const max = sqlLimit(limit, "orphans' limit")
      const rows = await ctx.run('lease orphans', () => driver.query(sql.orphanLeases, [ctx.clockParam(), max, ...live()]))
      return rows.map((row) => String(row.log_id))
    },
  }
}

/** The refusal of a lease whose holder (this store instance's liveness) died: another instance may have it now. */
export const lostLiveness = (logId: string) =>
  new LeaseLostError(
    logId,
    'was taken while this store instance could prove it was alive, and it no longer can (its liveness connection ended), so another host may drive the session now; nothing was written',
  )
