import { isHarnessError } from '../contract/errors.js'
import { driveInbox } from './drive-inbox.js'
import { type HostContext, openOnHost } from './host-open.js'
import { LiveSession } from './live-session.js'
import type { Session } from './session.js'

/**
 * `host.drive`: takes the session's lease, drives it to the end of its queue, lets it go.
 * `driving` holds the sessions this host drives now: a second drive of one of them is busy
 * (the first runs the queue), since taking the lease again as the same owner would fence out
 * the first in the middle of its turn.
 */
export async function driveHere(
  context: HostContext,
  track: (session: Session | undefined) => Session | undefined,
  driving: Set<string>,
  sessionId: string,
): Promise<'done' | 'busy'> {
  if (driving.has(sessionId)) return 'busy'
  driving.add(sessionId)
  try {
    return await driveOnce(context, track, sessionId)
  } finally {
    driving.delete(sessionId)
  }
}

async function driveOnce(
  context: HostContext,
  track: (session: Session | undefined) => Session | undefined,
  sessionId: string,
): Promise<'done' | 'busy'> {
  let session: Session | undefined
  try {
    session = track(await openOnHost(context, { sessionId, parent: null, resumeOnly: true }))
  } catch (error) {
    if (isHarnessError(error, 'LEASE_HELD')) return 'busy'
    throw error
  }
  if (!session) return 'done'
  try {
    if (session instanceof LiveSession) await driveInbox(session, { store: context.store, clock: context.clock })
  } finally {
    await session.close()
  }
  return 'done'
}
