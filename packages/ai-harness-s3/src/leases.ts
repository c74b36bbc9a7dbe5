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

/**
 * Leases as one object per session, changed only with `If-Match` on the ETag read just
 * before (or `If-None-Match: *` for the first lease). A write that loses the race reads
 * the object again and decides from what it finds.
 */
export function leaseStore(io: ObjectIO, keys: KeyLayout, clock: Clock, limits: StoreLimits): LeaseStore {
  const load = async (logId: string) => {
    const stored = await io.get(keys.lease(logId))
    return stored ? { stored, state: JSON.parse(stored.body) as LeaseState } : undefined
  }

  const save = (logId: string, stored: StoredText | undefined, next: LeaseState) =>
    stored ? io.putIfMatch(keys.lease(logId), JSON.stringify(next), stored.etag) : io.putIfAbsent(keys.lease(logId), JSON.stringify(next))

  const isCurrent = (state: LeaseState | undefined, lease: Lease) =>
    state?.held === true && state.fence === lease.fence && state.owner === lease.owner

  return {
    async acquire(logId, owner, ttlMs) {
      assertLogId(logId, limits)
      for (let round = 0; round < ROUNDS; round++) {
        const current = await load(logId)
        const now = clock.now()
        const state = current?.state
        if (state?.held && state.expiresAt > now && state.owner !== owner) throw new LeaseHeldError(logId, state.expiresAt)
        const next: LeaseState = { owner, fence: (state?.fence ?? 0) + 1, expiresAt: now + ttlMs, held: true }
        if (await save(logId, current?.stored, next)) return { logId, owner, fence: next.fence, expiresAt: next.expiresAt }
      }
      throw contended(logId)
    },

    async renew(lease, ttlMs) {
      for (let round = 0; round < ROUNDS; round++) {
        const current = await load(lease.logId)
        const now = clock.now()
        if (!current || !isCurrent(current.state, lease) || current.state.expiresAt <= now) throw new LeaseLostError(lease.logId)
        const next: LeaseState = { ...current.state, expiresAt: now + ttlMs }
        if (await save(lease.logId, current.stored, next)) return { ...lease, expiresAt: next.expiresAt }
      }
      throw contended(lease.logId)
    },

    async release(lease) {
      for (let round = 0; round < ROUNDS; round++) {
        const current = await load(lease.logId)
        if (!current || !isCurrent(current.state, lease)) {
          throw new LeaseLostError(lease.logId, 'is no longer held by this owner, so it was not released')
        }
        if (await save(lease.logId, current.stored, { ...current.state, held: false })) return
      }
      throw contended(lease.logId)
    },
  }
}

const contended = (logId: string) =>
  new HarnessError(
    'STORE_UNAVAILABLE',
    `The lease object of session ${JSON.stringify(logId)} changed under every one of ${ROUNDS} tries. Try again later.`,
  )
