import { randomUUID } from 'node:crypto'
import { systemClock } from '../contract/clock.js'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import { assertLogId } from '../contract/prepare-batch.js'
import { forEachPage } from '../contract/read-all.js'
import type { Clock, HarnessStore, Lease, StoreLimits } from '../contract/types.js'
import { agentMetaOf, childSessionId } from './agent-tool.js'
import { answerQuestion } from './answer-question.js'
import type { Harness } from './harness.js'
import { applyEntry, readAndFold, type SessionState } from './session-fold.js'
import { openSession, type Session, sessionScanner } from './session.js'
import { durableNow, type GuardedStore, guardStore } from './store-boundary.js'
import { resolveTimings, type TimingOptions } from './timings.js'

export interface HostOptions extends TimingOptions {
  store: HarnessStore
  /** The harnesses this host can run, by name. */
  harnesses: Harness | Harness[]
  /**
   * Names this host in the log (the `host` of turn records). Leases belong to the host
   * object, not to the id: a second process with the same id (or a restarted one while
   * the old lease lasts) gets `LEASE_HELD` like any other host, until that lease is
   * released or expires. Default: random.
   */
  hostId?: string
  clock?: Clock
}

export interface OpenOptions {
  /** Harness name (or the harness itself). Default: the one that made the session, or the host's only harness. */
  harness?: string | Harness
  /** Default: a new random id. */
  sessionId?: string
  /** Secrets of the session, by name: never logged, never shown to the model. */
  secrets?: Record<string, string>
  /** For an agent tool's child session: the call that runs it. */
  parent?: { sessionId: string; toolCallId: string }
}

export interface AnswerOptions {
  sessionId: string
  /** From the question event: `${toolCallId}:${name}`. */
  questionId: string
  answer: unknown
}

/** Runs durable sessions of its harnesses on one store. */
export interface Host {
  readonly hostId: string
  readonly store: HarnessStore
  readonly clock: Clock
  readonly leaseMs: number
  readonly harnesses: readonly Harness[]
  /**
   * Opens (or creates) a session and takes its lease. Throws LEASE_HELD while another host
   * drives it. A refused open (a bad id, a short secret, the wrong harness) writes nothing.
   */
  open(options?: OpenOptions): Promise<Session>
  /**
   * Answers a question of a parked session, from any host: checks the answer against the
   * question's schema (ANSWER_INVALID, nothing written), logs it (ALREADY_ANSWERED for a
   * different second answer), and schedules the session so a worker resumes it at once.
   * Calling it again with the same answer (after a failure whose outcome was unknown) succeeds.
   */
  answer(options: AnswerOptions): Promise<void>
  /**
   * Deletes a session for good, with the sessions of its agent-tool calls: the session
   * objects of this host that drive it are closed first, then the store deletes the logs,
   * leases and wakeups. Hosts elsewhere that still hold it can write nothing more to it.
   */
  delete(options: { sessionId: string }): Promise<void>
  /** Stops every running turn for a deploy (waiting at most `stopTimeoutMs`): the turns stay open and are resumed at once elsewhere. */
  shutdown(): Promise<void>
}

/** A host, and what only a worker asks of it. */
export interface HostInternals {
  readonly host: Host
  /** The app's store behind the host's boundary (deadlines, typed errors). */
  readonly store: GuardedStore
  /** Opens a session only to go on with it: a session without a log is not created (its wakeup is removed). */
  resume(sessionId: string): Promise<Session | undefined>
}

/** Creates a host. */
export function createHost(options: HostOptions): Host {
  return createHostInternals(options).host
}

export function createHostInternals(options: HostOptions): HostInternals {
  const harnesses = [options.harnesses].flat()
  const hostId = options.hostId ?? `host-${randomUUID()}`
  // The lease owner names this host object, so two processes with one hostId never share a lease.
  const owner = `${hostId}#${randomUUID()}`
  const clock = options.clock ?? systemClock
  const timings = resolveTimings(options)
  const store = guardStore(options.store, { timeoutMs: timings.storeTimeoutMs, clock })
  const open = new Set<Session>()

  const pick = (wanted: string | Harness | undefined, madeBy: string | undefined): Harness => {
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

  const openWith = async (request: {
    sessionId: string
    harness?: string | Harness
    secrets?: Record<string, string>
    parent: { sessionId: string; toolCallId: string } | null
    resumeOnly: boolean
  }): Promise<Session | undefined> => {
    const { sessionId } = request
    // Everything that can refuse the open is checked before the lease: a refused open writes nothing.
    assertLogId(sessionId, store.limits)
    const scanner = sessionScanner(request.secrets ?? {})
    const state = await readAndFold(store, sessionId)
    if (request.resumeOnly && state.nextSeq === 1) return forgetEmpty(store, sessionId, clock)
    const harness = pick(request.harness, state.harness)
    assertMadeBy(sessionId, state, harness)
    let lease: Lease | undefined
    if (store.leases) lease = await store.leases.acquire(sessionId, owner, timings.leaseMs)
    try {
      await catchUp(store, sessionId, state)
      assertMadeBy(sessionId, state, harness)
      if (request.resumeOnly && state.nextSeq === 1) {
        if (lease) await store.leases?.release(lease).catch(() => {})
        return forgetEmpty(store, sessionId, clock)
      }
      const session = await openSession({
        store,
        harness,
        sessionId,
        state,
        scanner,
        secrets: request.secrets ?? {},
        clock,
        lease,
        timings,
        parent: request.parent,
        hostId,
        wakeParentWhenIdle: request.resumeOnly,
        onClosed: () => open.delete(session),
        // A child agent's session runs on this host (same store, clock and lease owner), so the same process can continue it.
        openChild: async (child, childId, parent) =>
          (await openWith({ sessionId: childId, harness: child, parent, secrets: request.secrets, resumeOnly: false }))!,
      })
      return session
    } catch (error) {
      if (lease) await store.leases?.release(lease).catch(() => {})
      throw error
    }
  }

  const track = (session: Session | undefined) => {
    if (session) open.add(session)
    return session
  }

  const deleteTree = async (sessionId: string, state: SessionState): Promise<void> => {
    // Children first: if this fails halfway, the parent's log still names them for a second try.
    for (const childId of agentChildren(sessionId, state, harnesses, store.limits)) {
      const childState = await readAndFold(store, childId)
      if (childState.nextSeq > 1) await deleteTree(childId, childState)
    }
    await store.delete(sessionId)
  }

  const host: Host = {
    hostId,
    store: options.store,
    clock,
    leaseMs: timings.leaseMs,
    harnesses,
    async open(openOptions = {}) {
      const session = await openWith({
        sessionId: openOptions.sessionId ?? randomUUID(),
        harness: openOptions.harness,
        secrets: openOptions.secrets,
        parent: openOptions.parent ?? null,
        resumeOnly: false,
      })
      return track(session)!
    },
    answer: (answerOptions) => answerQuestion(store, clock, answerOptions),
    async delete({ sessionId } = {} as { sessionId: string }) {
      assertLogId(sessionId, store.limits)
      const local = [...open].filter((s) => s.id === sessionId || s.id.startsWith(`${sessionId}/agent/`))
      await Promise.all(local.map((s) => s.close()))
      await deleteTree(sessionId, await readAndFold(store, sessionId))
    },
    async shutdown() {
      const results = await Promise.allSettled([...open].map((session) => session.handOff()))
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed) throw failed.reason
    },
  }
  return {
    host,
    store,
    resume: async (sessionId) => track(await openWith({ sessionId, parent: null, resumeOnly: true })),
  }
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
async function catchUp(store: GuardedStore, sessionId: string, state: SessionState): Promise<void> {
  await forEachPage(
    store,
    sessionId,
    1000,
    (page) => {
      for (const entry of page) applyEntry(state, entry)
    },
    state.nextSeq - 1,
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

/** The sessions of a session's agent-tool calls (every call's, when the harness is not known here). */
function agentChildren(sessionId: string, state: SessionState, harnesses: readonly Harness[], limits: StoreLimits): string[] {
  const harness = harnesses.find((h) => h.name === state.harness)
  const ids: string[] = []
  for (const [callId, call] of state.toolCalls) {
    if (harness && !agentMetaOf(harness.toolNamed(call.name))) continue
    ids.push(childSessionId(sessionId, callId))
  }
  return ids.filter((id) => {
    try {
      assertLogId(id, limits)
      return true
    } catch (error) {
      if (isHarnessError(error, 'INVALID_ARGUMENT')) return false
      throw error
    }
  })
}
