/** What a request asks to do; `authorize` decides on it. */
export type HarnessAction = 'sessions.list' | 'session.read' | 'session.watch' | 'session.answer' | 'session.approve' | 'session.cancel'

/**
 * The sessions a caller may see and act on, for a tenant rule: ids that start with
 * `prefix` and that `filter` (if given) accepts. Returned by `authorize`, it scopes a
 * listing (`GET /sessions`, also `?waiting=1`: other ids are never listed) and, for
 * the actions of one session, allows the request only when the session's id is in scope.
 */
export interface SessionScope {
  /** Only ids that start with this, e.g. `` `${tenant}/` ``. A listing seeks to it, so it costs the scoped ids only. */
  prefix?: string
  /** Only ids this accepts. A listing reads the store's pages and keeps the accepted ids. */
  filter?: (sessionId: string) => boolean
}

/**
 * Decides whether a request may do `action` (on `sessionId`, for the actions of one
 * session; a listing gets `undefined`). Return `true` to allow everything the action
 * touches, a {@link SessionScope} to allow only the sessions in it, and anything else
 * refuses with 403 `FORBIDDEN` before the store is touched, and before the id is checked (an
 * id that is not valid percent-encoding comes as it is in the path, and is refused with 400
 * only if you allow it). Read your session cookie or bearer token from `request` here.
 */
export type Authorize = (
  request: Request,
  action: HarnessAction,
  sessionId: string | undefined,
) => boolean | SessionScope | Promise<boolean | SessionScope>

/** What `authorize` allowed: everything, a scope, or nothing. */
export type Allowed = { scope: SessionScope | undefined } | undefined

/** Reads `authorize`'s answer for a request: only `true` or a scope object (that holds the session, for one session's actions) allows. */
export function allowed(answer: unknown, sessionId: string | undefined): Allowed {
  if (answer === true) return { scope: undefined }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return undefined
  const scope = answer as SessionScope
  if (scope.prefix !== undefined && typeof scope.prefix !== 'string') return undefined
  if (scope.filter !== undefined && typeof scope.filter !== 'function') return undefined
  if (sessionId !== undefined && !inScope(scope, sessionId)) return undefined
  return { scope }
}

/** True when the scope holds the id. */
export function inScope(scope: SessionScope | undefined, sessionId: string): boolean {
  if (!scope) return true
  if (scope.prefix !== undefined && !sessionId.startsWith(scope.prefix)) return false
  return scope.filter === undefined || scope.filter(sessionId) === true
}
