import { isHarnessError } from '../contract/errors.js'
import { driveInbox } from './drive-inbox.js'
import { type HostContext, openOnHost } from './host-open.js'
import { LiveSession } from './live-session.js'
import type { Session } from './session.js'

/** `host.drive`: takes the session's lease, drives it to the end of its queue, lets it go. */
export async function driveHere(
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
