import { checkListSessionsOptions, compareCodePoints, type SessionListStore, WAITING_FOR_PERSON } from '@tanstack/ai-harness/store'
import type { KeyLayout } from './keys.js'
import { mapBounded, type ObjectIO } from './objects.js'
import { parseWakeup } from './wakeups.js'

/** Wakeup objects read at once to confirm waiting sessions. */
const CONFIRM_CONCURRENCY = 8

/**
 * The session listings.
 *
 * - `list`: one LIST of the `session/` markers after `after` (hex ids: S3's key order is
 *   the ids' code point order), so a page costs one request.
 * - `waiting`: the due keys at `WAITING_FOR_PERSON` are the waiting set itself; their ids
 *   are escaped in a form whose key order is not code point order, so the whole waiting
 *   prefix is listed (1 000 keys a request: it holds only the sessions that wait) and
 *   sorted, and each id of the page is confirmed against its `wakeup/<id>` object (a
 *   crashed `schedule` can leave a stale due key behind).
 */
export function s3Sessions(io: ObjectIO, keys: KeyLayout): SessionListStore {
  return {
    async list(options) {
      const { after, limit } = checkListSessionsOptions(options)
      for await (const page of io.list(keys.sessionPrefix, after === undefined ? undefined : keys.session(after))) {
        const ids = page.flatMap(({ key }) => keys.parseSession(key) ?? [])
        if (ids.length > 0) return ids.slice(0, limit)
      }
      return []
    },
    async waiting(options) {
      const { after, limit } = checkListSessionsOptions(options)
      const candidates = new Set<string>()
      for await (const page of io.list(keys.waitingPrefix)) {
        for (const { key } of page) {
          const due = keys.parseDue(key)
          if (due && (after === undefined || compareCodePoints(due.logId, after) > 0)) candidates.add(due.logId)
        }
      }
      const sorted = [...candidates].sort(compareCodePoints)
      const out: string[] = []
      for (let start = 0; start < sorted.length && out.length < limit; ) {
        const chunk = sorted.slice(start, start + (limit - out.length))
        start += chunk.length
        const live = await mapBounded(chunk, CONFIRM_CONCURRENCY, async (logId) => {
          const stored = await io.get(keys.wakeup(logId))
          return stored !== undefined && parseWakeup(stored, keys.wakeup(logId)).at === WAITING_FOR_PERSON
        })
        out.push(...chunk.filter((_, i) => live[i]))
      }
      return out
    },
  }
}
