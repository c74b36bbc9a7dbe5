import { parkedCall, type SessionState } from './session-fold.js'

/**
 * What a session is doing: the one vocabulary of `session.status`, of the log's view
 * (`statusOf`) and of the HTTP session view (`GET /sessions/:id`).
 *
 * What the log says, so any host can tell (`statusOf`):
 * - `idle`: no open turn; a prompt starts one.
 * - `cut`: the open turn waits for nothing: a crash or a stop cut it, and `resume()` (or a
 *   worker) finishes it by the replay rules. The log alone cannot tell a cut turn from one a
 *   host is running now: that host's `session.status` reads `running`.
 * - `parked`: the open turn waits on purpose, for an answer, an approval, a wake time or a
 *   child agent (`session.parked.reason`, the view's `parked.reason`).
 *
 * What only the session object knows:
 * - `running`: this object runs a turn (its stream is being read).
 * - `closed`: this object let the session go (`close()`, `handOff()`); open it again to drive it.
 * - `deleted`: the session's log was deleted while this object drove it; it writes nothing more.
 *
 * A session object that parked let its lease go: to act on it, open it again.
 */
export type SessionStatus = 'idle' | 'running' | 'cut' | 'parked' | 'closed' | 'deleted'

/** The statuses the log alone tells (see {@link SessionStatus}). */
export type LogStatus = Extract<SessionStatus, 'idle' | 'cut' | 'parked'>

/** What a session's folded log says it is doing: no open turn, a cut one, or one that waits on purpose. */
export function statusOf(state: SessionState): LogStatus {
  if (!state.openTurn) return 'idle'
  return parkedCall(state) ? 'parked' : 'cut'
}
