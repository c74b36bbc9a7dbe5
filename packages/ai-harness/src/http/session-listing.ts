import { HarnessError } from '../contract/errors.js'
import { isHarnessLogId } from '../contract/harness-logs.js'
import { compareCodePoints } from '../contract/list-sessions.js'
import type { SessionListStore } from '../contract/types.js'
import type { Host } from '../runtime/host.js'
import { inScope, type SessionScope } from './authorize.js'
import { numberParam } from './request-input.js'
import { Refusal } from './responses.js'

/** Store pages one listing request reads at most for a scope: a filter that keeps few ids costs bounded work per request. */
const MAX_SCAN_PAGES = 8

/** What `GET /sessions` returns: a page of ids and the cursor of the next (`null` at the end). */
export interface SessionPage {
  sessions: string[]
  /** Pass as `after` for the next page; `null` when the listing is done. A scoped page may hold fewer ids than `limit`, even none, and still go on. */
  next: string | null
}

/**
 * `GET /sessions?after=&limit=&waiting=1`: ids in code point order, only those in the
 * caller's scope. A prefix seeks to the first id that could hold it and stops after the
 * last; a filter reads at most {@link MAX_SCAN_PAGES} pages a request.
 */
export async function listSessions(host: Host, params: URLSearchParams, scope: SessionScope | undefined): Promise<SessionPage> {
  const sessions = host.store.sessions
  if (!sessions) {
    throw new HarnessError(
      'CAPABILITY_MISSING',
      "This host's store cannot list sessions (it has no sessions capability); open a session by its id instead.",
    )
  }
  const limit = numberParam(params, 'limit', 50, 1000) || 50
  const waiting = params.get('waiting')
  if (waiting !== null && waiting !== '1' && waiting !== '0' && waiting !== 'true' && waiting !== 'false') {
    throw new Refusal('INVALID_ARGUMENT', 'Query parameter waiting is 1 or 0.')
  }
  const list: SessionListStore['list'] = (options) =>
    (waiting === '1' || waiting === 'true' ? sessions.waiting : sessions.list).call(sessions, options)
  const after = params.get('after') || undefined
  if (!scope) {
    const ids = await list({ ...(after ? { after } : {}), limit })
    // Only an empty page ends a listing: `next` is the cursor of the next page, null at the end.
    // The harness's own logs (inboxes, streams, locks) are no sessions: a page may hold fewer ids.
    return { sessions: ids.filter((id) => !isHarnessLogId(id)), next: ids.length > 0 ? ids.at(-1)! : null }
  }
  return scopedPage(list, scope, after, limit)
}

async function scopedPage(
  list: SessionListStore['list'],
  scope: SessionScope,
  after: string | undefined,
  limit: number,
): Promise<SessionPage> {
  const prefix = scope.prefix ?? ''
  const start = seekBefore(prefix)
  let cursor = after === undefined || (start !== undefined && compareCodePoints(after, start) < 0) ? start : after
  const kept: string[] = []
  for (let page = 0; page < MAX_SCAN_PAGES; page++) {
    const ids = await list({ ...(cursor === undefined ? {} : { after: cursor }), limit })
    if (ids.length === 0) return { sessions: kept, next: null }
    for (const id of ids) {
      // Past the prefix's range: nothing after this id can start with it.
      if (!id.startsWith(prefix) && compareCodePoints(id, prefix) > 0) return { sessions: kept, next: null }
      cursor = id
      if (inScope(scope, id) && !isHarnessLogId(id)) kept.push(id)
      if (kept.length === limit) return { sessions: kept, next: id }
    }
  }
  return { sessions: kept, next: cursor ?? null }
}

/**
 * A string just before every id that starts with `prefix`: the prefix with its last
 * code point one lower and the highest code point after it, so a listing skips
 * (nearly) everything before the prefix's range. `undefined`: from the start.
 */
function seekBefore(prefix: string): string | undefined {
  const points = [...prefix]
  const last = points.pop()?.codePointAt(0)
  if (last === undefined) return undefined
  const head = points.join('')
  if (last === 0) return head === '' ? undefined : head
  // Below U+E000 a lone surrogate would be no string a store keeps: step over the surrogate range.
  const lower = last - 1 >= 0xd800 && last - 1 <= 0xdfff ? 0xd7ff : last - 1
  return `${head}${String.fromCodePoint(lower)}\u{10FFFF}`
}
