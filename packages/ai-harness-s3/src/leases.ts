import {
  assertLogId,
  checkLease,
  checkOwner,
  type Clock,
  HarnessError,
  type Lease,
  leaseExpiry,
  LeaseHeldError,
  LeaseLostError,
  type LeaseStore,
  type StoreLimits,
  EXPIRY_ONLY_LEASE_MS,
} from '@tanstack/ai-harness/store'
import type { KeyLayout } from './keys.js'
import type { ObjectIO, StoredText } from './objects.js'

/** The lease object of a session. Kept after release, so the next fence is still greater. */
interface LeaseState {
  owner: string
  fence: number
  expiresAt: number
  held: boolean
}

/** Compare-and-set rounds before giving up; each round re-reads, so a loss is never retried blindly. */
const ROUNDS = 16

function parseLease(stored: StoredText, key: string): LeaseState {
  try {
    const state = JSON.parse(stored.body) as LeaseState
    if (typeof state.fence === 'number' && typeof state.held === 'boolean') return state
  } catch {
    // reported below
  }
  throw new HarnessError(
    'SESSION_CORRUPT',
    `Object ${key} is not a lease. Remove objects that other programs wrote under the store's prefix.`,
  )
}

/**
 * Leases as one object per session, changed only with `If-Match` on the ETag read just
 * before (or `If-None-Match: *` for the first lease). A write that loses the race reads
 * the object again and decides from what it finds.
 */
export function leaseStore(
  io: ObjectIO,
  keys: KeyLayout,
  limits: StoreLimits,
  clock: Clock,
): LeaseStore & { end(logId: string): Promise<void> } {
  const load = async (logId: string) => {
    const stored = await io.get(keys.lease(logId))
    return stored ? { stored, state: parseLease(stored, keys.lease(logId)) } : undefined
  }

  const save = (logId: string, stored: StoredText | undefined, next: LeaseState) =>
    stored ? io.putIfMatch(keys.lease(logId), JSON.stringify(next), stored.etag) : io.putIfAbsent(keys.lease(logId), JSON.stringify(next))

  const isCurrent = (state: LeaseState | undefined, lease: Lease) =>
    state?.held === true && state.fence === lease.fence && state.owner === lease.owner

  return {
    // Expiry is all this store has: a short lease, safe within the clock skew it assumes.
    defaultLeaseMs: EXPIRY_ONLY_LEASE_MS,
    async acquire(logId, owner, ttlMs) {
      assertLogId(logId, limits)
      checkOwner(owner)
      leaseExpiry(clock.now(), ttlMs)
      for (let round = 0; round < ROUNDS; round++) {
        const current = await load(logId)
        const now = clock.now()
        const state = current?.state
        if (state?.held && state.expiresAt > now && state.owner !== owner) throw new LeaseHeldError(logId, state.expiresAt)
        const next: LeaseState = { owner, fence: (state?.fence ?? 0) + 1, expiresAt: leaseExpiry(now, ttlMs), held: true }
        if (await save(logId, current?.stored, next)) return { logId, owner, fence: next.fence, expiresAt: next.expiresAt }
      }
      throw contended(logId)
    },

    async renew(lease, ttlMs) {
      checkLease(lease, limits)
      leaseExpiry(clock.now(), ttlMs)
      for (let round = 0; round < ROUNDS; round++) {
        const current = await load(lease.logId)
        const now = clock.now()
        if (!current || !isCurrent(current.state, lease) || current.state.expiresAt <= now) throw new LeaseLostError(lease.logId)
        const next: LeaseState = { ...current.state, expiresAt: leaseExpiry(now, ttlMs) }
        if (await save(lease.logId, current.stored, next)) return { ...lease, expiresAt: next.expiresAt }
      }
      throw contended(lease.logId)
    },

    async release(lease) {
      checkLease(lease, limits)
      for (let round = 0; round < ROUNDS; round++) {
        const current = await load(lease.logId)
        if (!current || !isCurrent(current.state, lease)) {
          throw new LeaseLostError(lease.logId, 'is no longer held by this owner, so it was not released')
        }
        if (await save(lease.logId, current.stored, { ...current.state, held: false })) return
      }
      throw contended(lease.logId)
    },

    /**
     * For `delete`: ends whoever holds the lease (their renew and release meet LEASE_LOST)
     * and drops the owner, but keeps the fence, so the next lease of the id still gets a
     * greater fence than every lease before.
     */
    async end(logId) {
      for (let round = 0; round < ROUNDS; round++) {
        const current = await load(logId)
        if (!current || (!current.state.held && current.state.owner === '')) return
        if (await save(logId, current.stored, { owner: '', fence: current.state.fence, expiresAt: 0, held: false })) return
      }
      throw contended(logId)
    },
  }
}

const contended = (logId: string) =>
  new HarnessError(
    'STORE_UNAVAILABLE',
    `The lease object of session ${JSON.stringify(logId)} changed under every one of ${ROUNDS} tries. Try again later.`,
  )
