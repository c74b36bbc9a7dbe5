import { HarnessError } from '../contract/errors.js'
import { assertSessionId } from '../contract/harness-logs.js'
import { assertLogId } from '../contract/prepare-batch.js'
import { forEachPage } from '../contract/read-all.js'
import type { Clock, Lease } from '../contract/types.js'
import type { Harness } from './harness.js'
import { type LiveSession, openSession } from './live-session.js'
import type { LocalDrivers } from './local-drivers.js'
import type { Session } from './session.js'
import type { SecretScanner } from '../secrets/secret-scanner.js'
import { SessionSecrets } from '../secrets/session-secrets.js'
import { applyEntry, OPEN_PAGE, readAndFold, type SessionFold, type SessionState } from './session-fold.js'
import { durableNow, type GuardedStore } from './store-boundary.js'
import type { RuntimeTimings } from './timings.js'

/** What every open on one host shares. */
export interface HostContext {
  readonly store: GuardedStore
  readonly harnesses: readonly Harness[]
  /** The readable id, written in turn records. */
  readonly hostId: string
  /** The lease owner: the id and this host object's nonce, so two processes with one id never share a lease. */
  readonly owner: string
  readonly clock: Clock
  readonly timings: RuntimeTimings
  readonly onClosed: (session: Session) => void
  /** Told of each session object this host opens, with its secrets' scanner: `host.answer` and `host.approve` check input against it. */
  readonly onOpened: (session: Session, scanner: SecretScanner) => void
  /** The session objects of this host that hold a lease, one per session. */
  readonly drivers: LocalDrivers
}

export interface OpenRequest {
  readonly sessionId: string
  readonly harness?: string | Harness
  readonly secrets?: Record<string, string>
  readonly parent: { sessionId: string; toolCallId: string } | null
  /** A worker's open: a session without a log is not created, its wakeup is removed instead. */
  readonly resumeOnly: boolean
}

/**
 * Opens a session: everything that can refuse the open is checked before the lease (a
 * refused open writes nothing): the id, the secrets, the harness against the log. Then
 * the lease, then what landed between the read and the lease.
 */
export async function openOnHost(context: HostContext, request: OpenRequest): Promise<Session | undefined> {
  return takeOpen(context, await prepareOpen(context, request))
}

/**
 * What an open reads and checks before it asks for the lease: the log folded, the harness,
 * the secrets. A worker reads it ahead of a held lease's expiry, so the take at the expiry
 * only asks for the lease and reads what landed since ({@link takeOpen}).
 */
export type PreparedOpen =
  | { readonly request: OpenRequest; readonly empty: true }
  | {
      readonly request: OpenRequest
      readonly empty: false
      readonly state: SessionFold
      readonly harness: Harness
      readonly sessionSecrets: SessionSecrets
    }

/** The part of an open before the lease: it writes nothing, and refuses what the open would refuse. */
export async function prepareOpen(context: HostContext, request: OpenRequest): Promise<PreparedOpen> {
  const { store } = context
  const { sessionId } = request
  assertLogId(sessionId, store.limits)
  assertSessionId(sessionId)
  const state = await readAndFold(store, sessionId)
  if (request.resumeOnly && state.nextSeq === 1) return { request, empty: true }
  const harness = pickHarness(context.harnesses, request.harness, state.harness)
  assertMadeBy(sessionId, state, harness)
  const sessionSecrets = await SessionSecrets.open({
    harness,
    sessionId,
    hostId: context.hostId,
    given: request.secrets ?? {},
    usedBefore: state.secretNames,
    parent: request.parent ?? state.parent,
  })
  return { request, empty: false, state, harness, sessionSecrets }
}

/**
 * The rest of an open, once: the lease, then everything that landed after the prepared read
 * (however long ago it was read, a write of the previous holder that landed before this
 * lease is folded in, and one after it is refused by the fence), then the session object.
 */
export async function takeOpen(context: HostContext, prepared: PreparedOpen): Promise<Session | undefined> {
  const { store, clock } = context
  const { request } = prepared
  const { sessionId } = request
  if (prepared.empty) return forgetEmpty(store, sessionId, clock)
  return context.drivers.take(sessionId, request.resumeOnly, () => takeLease(context, prepared))
}

/** The lease, the catch-up and the session object, once no other object of this host holds the session. */
async function takeLease(context: HostContext, prepared: PreparedOpen & { empty: false }): Promise<LiveSession | undefined> {
  const { store, clock, timings } = context
  const { request, state, harness, sessionSecrets } = prepared
  const { sessionId } = request
  let lease: Lease | undefined
  if (store.leases) lease = await store.leases.acquire(sessionId, context.owner, timings.leaseMs)
  try {
    await catchUp(store, sessionId, state)
    assertMadeBy(sessionId, state, harness)
    if (request.resumeOnly && state.nextSeq === 1) {
      if (lease) await store.leases?.release(lease).catch(() => {})
      return forgetEmpty(store, sessionId, clock)
    }
    const session: LiveSession = await openSession({
      store,
      harness,
      sessionId,
      state,
      sessionSecrets,
      secrets: request.secrets ?? {},
      clock,
      lease,
      timings,
      parent: request.parent,
      hostId: context.hostId,
      wakeParentWhenIdle: request.resumeOnly,
      onClosed: () => {
        context.drivers.forget(sessionId, session)
        context.onClosed(session)
      },
      // A child agent's session runs on this host (same store, clock and lease owner), so the same process can continue it.
      reopen: async () => (await openOnHost(context, { ...request, harness, resumeOnly: false }))!,
      openChild: async (child, childId, parent) =>
        (await openOnHost(context, { sessionId: childId, harness: child, parent, secrets: request.secrets, resumeOnly: false }))!,
    })
    context.onOpened(session, sessionSecrets.scanner)
    return session
  } catch (error) {
    if (lease) await store.leases?.release(lease).catch(() => {})
    throw error
  }
}

/** The harness asked for, else the one that made the session, else the host's only one. */
function pickHarness(harnesses: readonly Harness[], wanted: string | Harness | undefined, madeBy: string | undefined): Harness {
  if (typeof wanted === 'object') return wanted
  const name = wanted ?? madeBy
  if (name === undefined) {
    if (harnesses.length === 1) return harnesses[0]!
    throw new HarnessError('INVALID_ARGUMENT', `This host runs ${harnesses.length} harnesses; say which: host.open({ harness: 'name' }).`)
  }
  const found = harnesses.find((h) => h.name === name)
  if (!found)
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `This host has no harness named ${JSON.stringify(name)}; pass it in createHost({ harnesses }).`,
    )
  return found
}

/** A session opens only with the harness that made it. */
function assertMadeBy(sessionId: string, state: SessionState, harness: Harness): void {
  if (state.harness !== undefined && state.harness !== harness.name) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `Session ${JSON.stringify(sessionId)} belongs to harness ${JSON.stringify(state.harness)}; open it with that harness.`,
    )
  }
}

/** Folds what landed after `state` was read (between the read and the lease). */
async function catchUp(store: GuardedStore, sessionId: string, state: SessionFold): Promise<void> {
  await forEachPage(
    store,
    sessionId,
    OPEN_PAGE.first,
    (page) => {
      for (const entry of page) applyEntry(state, entry)
    },
    state.nextSeq - 1,
    OPEN_PAGE.most,
  )
}

/**
 * A wakeup of a session without a log (deleted, or never written): remove it and create
 * nothing. A session written meanwhile is made due again, so its wakeup is not lost.
 */
async function forgetEmpty(store: GuardedStore, sessionId: string, clock: Clock): Promise<undefined> {
  if (!store.wakeups) return undefined
  await store.wakeups.cancel(sessionId)
  if ((await store.read(sessionId, { limit: 1 })).length > 0) await store.wakeups.schedule(sessionId, await durableNow(store, clock))
  return undefined
}
