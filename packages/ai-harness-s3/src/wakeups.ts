import {
  assertLogId,
  checkCount,
  checkDuration,
  checkTime,
  type Clock,
  HarnessError,
  MAX_TIME_MS,
  type StoreLimits,
  timeAfter,
  type Wakeup,
  type WakeupStore,
} from '@tanstack/ai-harness/store'
import { type DueKey, hexOf, type KeyLayout } from './keys.js'
import type { ObjectIO, StoredText } from './objects.js'

/** `wakeup/<id>`: which due key is the session's live one. */
interface WakeupState {
  at: number
  tag: string
}

const ROUNDS = 16
/**
 * A due key that is not the live one and older than this (by the store's clock) is
 * debris of a crashed writer, and `claim` removes it. Younger ones may belong to a
 * `schedule` between its two writes, so they are only skipped.
 */
const DEBRIS_AGE_MS = 10 * 60_000

// long: the wakeup calls share load, move and remove of the wakeup objects; each call is a few lines
/**
 * Wakeups as two kinds of object: `wakeup/<id>` says which due key is live (changed
 * only with `If-Match`/`If-None-Match`), and `due/<at>/<id>/<tag>` lets `due` and
 * `claim` list sessions by time from the keys alone. Each due key has a tag that is never
 * reused, so an old one can be deleted without a condition: it can never become live again.
 *
 * Write order: the new due key first, then the switch of `wakeup/<id>`, then the old due
 * key's delete. A crash can leave an extra due key (a spurious wakeup, harmless: the
 * worker finds nothing to do), never a lost one.
 */
export function wakeupStore(
  io: ObjectIO,
  keys: KeyLayout,
  limits: StoreLimits,
  clock: Clock,
): WakeupStore & { remove(logId: string): Promise<void> } {
  const newTag = () => keys.tag(Math.min(MAX_TIME_MS, clock.now()), hexOf(crypto.getRandomValues(new Uint8Array(6))))

  const load = async (logId: string): Promise<{ stored: StoredText; state: WakeupState } | undefined> => {
    const stored = await io.get(keys.wakeup(logId))
    return stored ? { stored, state: parseWakeup(stored, keys.wakeup(logId)) } : undefined
  }

  /** Points the session at a new due key; false when someone changed it first. */
  async function move(logId: string, current: { stored: StoredText; state: WakeupState } | undefined, at: number): Promise<boolean> {
    const tag = newTag()
    const dueKey = keys.due(at, logId, tag)
    await io.put(dueKey, JSON.stringify({ logId, at }))
    const body = JSON.stringify({ at, tag } satisfies WakeupState)
    const switched = current
      ? await io.putIfMatch(keys.wakeup(logId), body, current.stored.etag)
      : await io.putIfAbsent(keys.wakeup(logId), body)
    if (!switched) {
      await io.delete(dueKey)
      return false
    }
    if (current) await io.delete(keys.due(current.state.at, logId, current.state.tag))
    return true
  }

  /** Due keys with `at <= now`, oldest first, one per session, in pages. */
  async function* dueKeys(now: number): AsyncGenerator<DueKey & { key: string }> {
    const seen = new Set<string>()
    for await (const page of io.list(keys.duePrefix)) {
      for (const { key } of page) {
        const due = keys.parseDue(key)
        if (!due) continue
        if (due.at > now) return
        if (seen.has(due.logId)) continue
        seen.add(due.logId)
        yield { ...due, key }
      }
    }
  }

  /** Removes the session's wakeup: the due key first, so a crash in between leaves no spurious one. */
  async function remove(logId: string): Promise<void> {
    assertLogId(logId, limits)
    const current = await load(logId)
    if (!current) return
    await io.delete(keys.due(current.state.at, logId, current.state.tag))
    await io.delete(keys.wakeup(logId))
  }

  async function tryClaim(candidate: DueKey & { key: string }, now: number, until: number): Promise<Wakeup | undefined> {
    const current = await load(candidate.logId)
    if (!current || current.state.tag !== candidate.tag) {
      if (keys.writtenAt(candidate.tag) < now - DEBRIS_AGE_MS) await io.delete(candidate.key)
      return undefined
    }
    return (await move(candidate.logId, current, until)) ? { logId: candidate.logId, at: candidate.at } : undefined
  }

  return {
    async schedule(logId, at) {
      assertLogId(logId, limits)
      // Whole ms, rounded up: a wakeup may come late by under 1 ms, never early.
      const whole = Math.ceil(checkTime(at, 'A wakeup time'))
      for (let round = 0; round < ROUNDS; round++) {
        const current = await load(logId)
        if (current?.state.at === whole) return
        if (await move(logId, current, whole)) return
      }
      throw new HarnessError('STORE_UNAVAILABLE', `The wakeup of session ${JSON.stringify(logId)} kept changing under schedule. Try again.`)
    },

    cancel: remove,
    remove,

    async due(wanted) {
      const limit = checkCount(wanted, "due's limit")
      const found: Wakeup[] = []
      if (limit === 0) return found
      const candidates = dueKeys(clock.now())
      // A due key counts only while the session's wakeup object points at it: a cancel or a
      // delete that raced a claim's move can leave the claim's new due key behind.
      for (;;) {
        const round: Array<DueKey & { key: string }> = []
        while (round.length < limit - found.length) {
          const next = await candidates.next()
          if (next.done) break
          round.push(next.value)
        }
        if (round.length === 0) break
        const current = await Promise.all(round.map((candidate) => load(candidate.logId)))
        round.forEach((candidate, i) => {
          if (current[i]?.state.tag === candidate.tag) found.push({ logId: candidate.logId, at: candidate.at })
        })
        if (found.length >= limit) break
      }
      await candidates.return(undefined)
      return found
    },

    async claim(wanted, holdMs) {
      const limit = checkCount(wanted, "claim's limit")
      const hold = checkDuration(holdMs, 'holdMs')
      const claimed: Wakeup[] = []
      if (limit === 0) return claimed
      const now = clock.now()
      // A hold past the latest time a store keeps hides the wakeup until then.
      const until = Math.ceil(timeAfter(now, hold))
      const candidates = dueKeys(now)
      // In rounds of as many candidates as are still wanted, tried in parallel; a lost
      // race (another worker moved the wakeup first) just moves on to the next one.
      for (;;) {
        const round: Array<DueKey & { key: string }> = []
        while (round.length < limit - claimed.length) {
          const next = await candidates.next()
          if (next.done) break
          round.push(next.value)
        }
        if (round.length === 0) break
        for (const won of await Promise.all(round.map((c) => tryClaim(c, now, until)))) if (won) claimed.push(won)
        if (claimed.length >= limit) break
      }
      await candidates.return(undefined)
      return claimed
    },
  }
}

export function parseWakeup(stored: StoredText, key: string): WakeupState {
  try {
    const state = JSON.parse(stored.body) as WakeupState
    if (typeof state.at === 'number' && typeof state.tag === 'string') return state
  } catch {
    // reported below
  }
  throw new HarnessError(
    'SESSION_CORRUPT',
    `Object ${key} is not a wakeup. Remove objects that other programs wrote under the store's prefix.`,
  )
}
