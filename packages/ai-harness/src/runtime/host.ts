import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import { systemClock } from '../contract/clock.js'
import type { Clock, HarnessStore, Lease } from '../contract/types.js'
import { findNonJson, jsonCopy } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import type { Harness } from './harness.js'
import type { AnswerRecord } from './records.js'
import { readAndFold } from './session-fold.js'
import { resolvableSecrets } from '../secrets/session-secrets.js'
import { openSession, type Session } from './session.js'

export interface HostOptions {
  store: HarnessStore
  /** The harnesses this host can run, by name. */
  harnesses: Harness | Harness[]
  /** Identifies this host in leases. A restarted host with the same id takes its own leases back at once. Default: random. */
  hostId?: string
  clock?: Clock
  /** How long a lease lasts before another host may take the session over. Default 30 s. */
  leaseMs?: number
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
  /** Opens (or creates) a session and takes its lease. Throws LEASE_HELD while another host drives it. */
  open(options?: OpenOptions): Promise<Session>
  /**
   * Answers a question of a parked session, from any host: checks the answer against the
   * question's schema (ANSWER_INVALID, nothing written), logs it (ALREADY_ANSWERED for a
   * second answer), and schedules the session so a worker resumes it at once.
   */
  answer(options: AnswerOptions): Promise<void>
  /** Stops every running turn for a deploy: the turns stay open and are resumed at once elsewhere. */
  shutdown(): Promise<void>
}

const DEFAULT_LEASE_MS = 30_000

/** Creates a host. */
export function createHost(options: HostOptions): Host {
  const harnesses = [options.harnesses].flat()
  const hostId = options.hostId ?? `host-${randomUUID()}`
  const clock = options.clock ?? systemClock
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  const store = options.store
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

  const host: Host = {
    hostId,
    store,
    clock,
    leaseMs,
    harnesses,
    async open(openOptions = {}) {
      const sessionId = openOptions.sessionId ?? randomUUID()
      let lease: Lease | undefined
      if (store.leases) lease = await store.leases.acquire(sessionId, hostId, leaseMs)
      try {
        const state = await readAndFold(store, sessionId)
        const session = await openSession({
          store,
          harness: pick(openOptions.harness, state.harness),
          sessionId,
          state,
          secrets: openOptions.secrets ?? {},
          clock,
          lease,
          leaseMs,
          parent: openOptions.parent ?? null,
          hostId,
          onClosed: () => open.delete(session),
          // A child agent's session runs on this host's store, clock and id, so the same process can continue it.
          openChild: (child, childId, parent) =>
            createHost({ store, harnesses: child, hostId, clock, leaseMs }).open({
              sessionId: childId,
              parent,
              secrets: openOptions.secrets,
            }),
        })
        open.add(session)
        return session
      } catch (error) {
        if (lease) await store.leases?.release(lease).catch(() => {})
        throw error
      }
    },
    async answer({ sessionId, questionId: id, answer }) {
      for (let attempt = 0; attempt < 5; attempt++) {
        const state = await readAndFold(store, sessionId)
        const question = state.questions.get(id)
        if (!question) {
          throw new HarnessError(
            'QUESTION_NOT_FOUND',
            `Session ${JSON.stringify(sessionId)} has no question ${JSON.stringify(id)}; use the questionId of the question event.`,
          )
        }
        if (question.answer)
          throw new HarnessError('ALREADY_ANSWERED', `Question ${JSON.stringify(id)} is answered already; a question takes one answer.`)
        const turnId = state.toolCalls.get(question.ask.toolCallId)?.turnId
        if (!state.openTurn || state.openTurn.turnId !== turnId || state.results.has(question.ask.toolCallId)) {
          throw new HarnessError(
            'QUESTION_NOT_FOUND',
            `Question ${JSON.stringify(id)} belongs to a turn that has ended (finished or cancelled); nobody waits for its answer.`,
          )
        }
        const secrets = await resolvableSecrets(
          harnesses.find((h) => h.name === state.harness),
          state.secretNames,
        )
        // Before the schema check: its messages may repeat the answer.
        const held = secrets.find(answer)
        if (held) {
          throw new HarnessError(
            'RECORD_SECRET',
            `The answer holds a secret of the session at ${held.path} (${held.encoding}); the log must not keep it. Answer without the secret.`,
          )
        }
        const bad = findNonJson(answer)
        if (bad) throw new HarnessError('ANSWER_INVALID', `The answer is not JSON at ${bad.path}: ${bad.reason}.`)
        const checked = z.fromJSONSchema(question.ask.schema as never).safeParse(answer)
        if (!checked.success) {
          const issues = checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')
          throw new HarnessError('ANSWER_INVALID', `The answer does not match the question's schema (${issues}). Send an answer that does.`)
        }
        const record: AnswerRecord = {
          type: 'harness.answer',
          toolCallId: question.ask.toolCallId,
          name: question.ask.name,
          answer: jsonCopy(answer) as JsonValue,
          at: clock.now(),
        }
        try {
          await store.append(sessionId, state.nextSeq, [record])
        } catch (error) {
          // Someone else wrote meanwhile (maybe another answer): read again and decide.
          if (isHarnessError(error, 'LOG_CONFLICT')) continue
          throw error
        }
        await store.wakeups?.schedule(sessionId, clock.now())
        return
      }
      throw new HarnessError('SESSION_BUSY', `Session ${JSON.stringify(sessionId)} kept changing while answering; try again.`)
    },
    async shutdown() {
      await Promise.all([...open].map((session) => session.handOff()))
    },
  }
  return host
}
