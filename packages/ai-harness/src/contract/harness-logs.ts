import { HarnessError } from './errors.js'

/**
 * The harness keeps logs of its own beside a store's sessions (a session's inbox of
 * submitted prompts, resumable streams, locks), all under ids that begin with this. No
 * session id may: so those logs never meet a session, and listings of sessions leave them out.
 */
export const HARNESS_LOG_PREFIX = 'harness.'

/** True for the id of one of the harness's own logs (an inbox, a stream, a lock), which is no session. */
export const isHarnessLogId = (logId: string): boolean => logId.startsWith(HARNESS_LOG_PREFIX)

/** Refuses a session id in the harness's own namespace (`harness.…`) with `INVALID_ARGUMENT`. */
export function assertSessionId(sessionId: string): void {
  if (isHarnessLogId(sessionId)) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `Session ids beginning ${JSON.stringify(HARNESS_LOG_PREFIX)} are the harness's own (inboxes, streams, locks); choose another id than ${JSON.stringify(sessionId)}.`,
    )
  }
}
