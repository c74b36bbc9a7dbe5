import { systemClock } from '../contract/clock.js'
import { assertLogId } from '../contract/prepare-batch.js'
import type { Clock, HarnessStore } from '../contract/types.js'
import type { SecretScanner } from '../secrets/secret-scanner.js'
import { answerQuestion } from './answer-question.js'
import { approveCall } from './approve-call.js'
import { deleteSessionTree } from './delete-session.js'
import type { Harness } from './harness.js'
import { type HostContext, openOnHost, prepareOpen, takeOpen } from './host-open.js'
import type { PersonInputRules } from './person-input.js'
import type { Session } from './session.js'
export type { SubmitOptions, SubmitResult } from './submit-input.js'
import { type GuardedStore, guardStore } from './store-boundary.js'
import { driveHere } from './drive-here.js'
import { LocalDrivers } from './local-drivers.js'
import { type SubmitOptions, type SubmitResult, submitInput } from './submit-input.js'
import { resolveTimings, type TimingOptions } from './timings.js'
import { otelApi } from './tracing.js'

export interface HostOptions extends TimingOptions {
  store: HarnessStore
  /** The harnesses this host can run, by name. */
  harnesses: Harness | Harness[]
  /**
   * Names this host in the log (the `host` of turn records). Give each process slot a
   * stable one (the pod name, the systemd instance) so logs and leases say which slot
   * drove what. Leases belong to the host object, not to the id: a second process with
   * the same id gets `LEASE_HELD` like any other host while the first one lives. When the
   * first one died, a store that can prove it (`leases.orphans`: PostgreSQL, PGlite)
   * hands its sessions over at once, to this process or any worker; other stores wait
   * for the lease to expire. Default: random.
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
   * A session that another session object of this host holds is taken over: that object
   * stops its run (waiting at most `stopTimeoutMs` for a step in flight) and is closed first.
   */
  open(options?: OpenOptions): Promise<Session>
  /**
   * Answers a question of a parked session, from any host: checks the answer against the
   * question's schema (ANSWER_INVALID, nothing written), logs it (ALREADY_ANSWERED for a
   * different second answer), and schedules the session so a worker resumes it at once.
   * Calling it again with the same answer (after a failure whose outcome was unknown) succeeds.
   * An answer that holds a secret of the session (one its harness resolves, or one given to
   * `host.open` for a session object of this host that is still open) is `RECORD_SECRET`; a
   * host that does not run the session's harness cannot know those rules and refuses with
   * `CAPABILITY_MISSING`. Either way nothing is written.
   */
  answer(options: AnswerOptions): Promise<void>
  /**
   * Approves or denies a tool call that waits for approval (a tool with `needsApproval`),
   * from any host: logs the decision and schedules the session so a worker resumes it at
   * once. Approved, the call runs (a `durableTool` with its steps); denied, the model gets
   * TanStack AI's denial result and the tool does not run. `reason` is kept in the log and
   * must not hold a secret of the session, as for an answer (RECORD_SECRET; a host without
   * the session's harness refuses a reason with CAPABILITY_MISSING; nothing written).
   *
   * A different second decision is `ALREADY_DECIDED`; the same decision again (after a
   * failure whose outcome was unknown) succeeds. A call that does not wait for approval
   * (unknown, or of a turn that ended) is `APPROVAL_NOT_FOUND`.
   */
  approve(input: { sessionId: string; toolCallId: string; approved: boolean; reason?: string }): Promise<void>
  /**
   * Deletes a session for good, with the sessions of its agent-tool calls: the session
   * objects of this host that drive it are closed first, then the store deletes the logs,
   * leases and wakeups. Hosts elsewhere that still hold it can write nothing more to it.
   */
  delete(options: { sessionId: string }): Promise<void>
  /**
   * Submits a prompt to a session from any host, without its lease: it is logged in the
   * session's inbox (the session is created if it has no log) and the session is made due.
   * Idempotent by `inputId`: a second submit of the same id writes nothing and names the
   * same run (`duplicate: true`), so a double submit is one turn. A prompt that arrives
   * while a turn runs is queued, and the turns run in the order of their submits.
   * Refused with `SESSION_BUSY` while the open turn waits for a person or the queue is
   * full, `RECORD_SECRET` for a prompt with a secret of the session, `INVALID_ARGUMENT` for a
   * child agent's session or an inputId reused for another prompt.
   *
   * The turn's chunks go to the durable stream `runId` (`@tanstack/ai-harness/streams`),
   * which exists once this resolves. Whoever drives the session runs it: call `drive` to run
   * it here, else the host that holds the session, or a worker, takes it.
   */
  submit(options: SubmitOptions): Promise<SubmitResult>
  /**
   * Drives a session here until nothing is left for it to do: its open turn, then every
   * queued prompt, each to its end whether or not anyone reads its stream (the chunks go
   * to the prompts' durable streams). Resolves `'busy'` at once when this host drives it already or another host holds
   * the session (it runs the queue itself); rejects when a turn fails (its wakeup stays, so a
   * worker tries again). `shutdown` stops it as it stops every turn of this host.
   */
  drive(sessionId: string): Promise<'done' | 'busy'>
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
  /**
   * The first half of `resume`, ahead of time: reads and checks the log, and returns the
   * second half (the lease, what landed since the read, the session object), to call once.
   */
  prepareResume(sessionId: string): Promise<() => Promise<Session | undefined>>
}

/** Creates a host. */
export function createHost(options: HostOptions): Host {
  return createHostInternals(options).host
}

export function createHostInternals(options: HostOptions): HostInternals {
  // The optional tracing API loads now, while the process starts, not on the way of the first turn it resumes.
  void otelApi()
  const harnesses = [options.harnesses].flat()
  const hostId = options.hostId ?? `host-${crypto.randomUUID()}`
  // The lease owner names this host object, so two processes with one hostId never share a lease.
  const owner = `${hostId}#${crypto.randomUUID()}`
  const clock = options.clock ?? systemClock
  // A store that can only wait for expiry may suggest a shorter lease than the host's default.
  const timings = resolveTimings({ ...options, leaseMs: options.leaseMs ?? options.store?.leases?.defaultLeaseMs })
  const store = guardStore(options.store, { timeoutMs: timings.storeTimeoutMs, clock })
  const open = new Set<Session>()
  const driving = new Set<string>()

  // The secrets given to host.open, until the session object is closed: an answer or a decision that holds one is refused.
  const scanners = new Map<Session, SecretScanner>()
  const rules: PersonInputRules = {
    harnesses,
    openSecrets: (sessionId) => [...scanners].filter(([session]) => session.id === sessionId).map(([, scanner]) => scanner),
  }
  const context: HostContext = {
    store,
    harnesses,
    hostId,
    owner,
    clock,
    timings,
    onClosed: (session) => {
      open.delete(session)
      // A parked session object lets its lease go but lives on (a prompt to it is still checked): so do its secrets.
      if (session.status !== 'parked') scanners.delete(session)
    },
    onOpened: (session, scanner) => void scanners.set(session, scanner),
    drivers: new LocalDrivers(),
  }
  const track = (session: Session | undefined) => {
    if (session) open.add(session)
    return session
  }

  const host: Host = {
    hostId,
    store: options.store,
    clock,
    leaseMs: timings.leaseMs,
    harnesses,
    async open(openOptions = {}) {
      const session = await openOnHost(context, {
        sessionId: openOptions.sessionId ?? crypto.randomUUID(),
        harness: openOptions.harness,
        secrets: openOptions.secrets,
        parent: openOptions.parent ?? null,
        resumeOnly: false,
      })
      return track(session)!
    },
    answer: (answerOptions) => answerQuestion(store, clock, rules, answerOptions),
    submit: (submitOptions) => submitInput(store, clock, rules, submitOptions),
    drive: (sessionId) => driveHere(context, track, driving, sessionId),
    approve: (input) => approveCall(store, clock, rules, input),
    async delete({ sessionId } = {} as { sessionId: string }) {
      assertLogId(sessionId, store.limits)
      const local = [...open].filter((s) => s.id === sessionId || s.id.startsWith(`${sessionId}/agent/`))
      await Promise.all(local.map((s) => s.close()))
      await deleteSessionTree(store, harnesses, sessionId)
    },
    async shutdown() {
      const results = await Promise.allSettled([...open].map((session) => session.handOff()))
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed) throw failed.reason
    },
  }
  return { host, store, ...resumes(context, track) }
}

/** A worker's opens: only to go on with a session, whole or in two halves. */
function resumes(
  context: HostContext,
  track: (session: Session | undefined) => Session | undefined,
): Pick<HostInternals, 'resume' | 'prepareResume'> {
  return {
    resume: async (sessionId) => track(await openOnHost(context, { sessionId, parent: null, resumeOnly: true })),
    async prepareResume(sessionId) {
      const prepared = await prepareOpen(context, { sessionId, parent: null, resumeOnly: true })
      return async () => track(await takeOpen(context, prepared))
    },
  }
}
