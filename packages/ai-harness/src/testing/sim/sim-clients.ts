import type { StreamChunk } from '@tanstack/ai'
import { isHarnessError } from '../../contract/errors.js'
import type { LogRecord } from '../../contract/types.js'
import type { Session } from '../../runtime/session.js'
import { harnessStreams, type HarnessStreams } from '../../streams/index.js'
import { drain } from '../streams.js'
import type { SimMachine, SimShared } from './sim-hosts.js'
import type { SimSessionPlan } from './sim-plan.js'
import { simStore } from './sim-store.js'
import { effectOf, SIM_SECRET } from './sim-workloads.js'

/** A client's view of one session of the world. */
export interface SimSessionState {
  readonly plan: SimSessionPlan
  /** Every chunk the client's streams gave. */
  readonly chunks: StreamChunk[]
  /** A submitted prompt's durable stream: its run, and every entry its reader was given, across reconnects. */
  runId: string | undefined
  readonly read: Array<{ offset: string; chunk: StreamChunk }>
  /** The reader came to the stream's end (it is closed). */
  readToEnd: boolean
  sending: boolean
  /** Opens of this client in flight other than the send's (a cancel's): each creates the session if it has no log. */
  opening: number
  deleteRequested: boolean
  deleted: boolean
  object: Session | undefined
}

/** A session's state before anything happened to it. */
function newSessionState(plan: SimSessionState['plan']): SimSessionState {
  return {
    plan,
    chunks: [],
    runId: undefined,
    read: [],
    readToEnd: false,
    sending: false,
    opening: 0,
    deleteRequested: false,
    deleted: false,
    object: undefined,
  }
}

/**
 * The people and apps of a world: each session's client sends its one prompt (again,
 * until its turn has begun), a person answers questions and decides approvals (late,
 * twice, wrongly, from another host), and the plan's hand-offs, cancels and deletes
 * happen at their times. A refusal must be a `HarnessError`; anything else is noted.
 */
export class SimClients {
  readonly sessions: SimSessionState[]
  /** The streams as a reader's process sees them: its store calls delayed and failing, never hanging (it never dies). */
  readonly #streams: HarnessStreams

  constructor(
    private readonly shared: SimShared,
    private readonly machines: readonly SimMachine[],
  ) {
    const clock = { now: () => shared.time.now }
    const reader = { name: 'reader', alive: true, crash: () => {}, faultsOn: () => shared.faultsOn(), renewalsFail: () => false as const }
    const store = simStore(shared.open(clock), { ...shared, faults: { ...shared.plan.faults, hang: 0, crash: 0 } }, reader)
    this.#streams = harnessStreams({ store, clock, retainMs: 3_600_000, firstChunkDeadlineMs: 3_600_000, pollMs: { min: 5, max: 200 } })
    this.sessions = shared.plan.sessions.map(newSessionState)
  }

  start(): void {
    const { time } = this.shared
    for (const s of this.sessions) {
      time.at(s.plan.at, () => this.#send(s))
      if (s.plan.handOffAt !== undefined) time.at(s.plan.handOffAt, () => this.#handOff(s))
      if (s.plan.cancelAt !== undefined) time.at(s.plan.cancelAt, () => this.#cancel(s))
      if (s.plan.deleteAt !== undefined) time.at(s.plan.deleteAt, () => this.#delete(s))
    }
    time.at(this.shared.random.int(200, 1_000), () => this.#person())
  }

  /** A machine to call on: the preferred one if its process lives, else any live one, else the preferred. */
  #machine(preferred = this.shared.random.int(0, this.machines.length - 1)): SimMachine {
    const first = this.machines[preferred % this.machines.length]!
    return first.alive ? first : (this.machines.find((m) => m.alive) ?? first)
  }

  #refused(what: string, error: unknown): void {
    this.shared.ledger.note(`client: ${what} refused: ${String(error).slice(0, 300)}`)
    if (!isHarnessError(error)) this.shared.ledger.notes.push(`${what} was refused with an error that is no HarnessError: ${String(error)}`)
  }

  #started(s: SimSessionState): boolean {
    return this.shared.ledger.records(s.plan.id).some((r) => r.type === 'harness.turn.started')
  }

  async #send(s: SimSessionState): Promise<void> {
    if (s.plan.submit) return this.#submit(s)
    if (s.deleteRequested || this.#started(s)) return
    // Checked again later: a send whose process died, or that was refused, is tried again.
    this.shared.time.at(this.shared.random.int(1_000, 3_000), () => void this.#send(s))
    if (s.sending) return
    s.sending = true
    const machine = this.#machine(s.plan.host)
    let session: Session | undefined
    try {
      session = await machine.host.open({ sessionId: s.plan.id, harness: 'sim', secrets: { api: SIM_SECRET } })
      s.object = session
      s.chunks.push(...(await drain(session.send(s.plan.workload))))
    } catch (error) {
      this.#refused('send', error)
    } finally {
      s.sending = false
      await session?.close().catch((error: unknown) => this.#refused('close', error))
    }
  }

  /** Submits the prompt (again, until a submit answered: one inputId, so one turn), drives it, and reads its stream. */
  async #submit(s: SimSessionState): Promise<void> {
    if (s.deleteRequested || s.runId !== undefined) return
    this.shared.time.at(this.shared.random.int(1_000, 3_000), () => void this.#submit(s))
    if (s.sending) return
    s.sending = true
    const machine = this.#machine(s.plan.host)
    try {
      const { runId } = await machine.host.submit({ sessionId: s.plan.id, inputId: 'p1', prompt: s.plan.workload, harness: 'sim' })
      s.runId ??= runId
      void this.#readStream(s, runId)
      await machine.host.drive(s.plan.id)
    } catch (error) {
      this.#refused('submit', error)
    } finally {
      s.sending = false
    }
  }

  /** Reads the run's durable stream to its end, reconnecting after a failure or now and then, from the last offset it got. */
  async #readStream(s: SimSessionState, runId: string): Promise<void> {
    const { time, random } = this.shared
    if (s.readToEnd || s.deleteRequested) return
    const from = s.read.at(-1)?.offset ?? '-1'
    const dropped = new AbortController()
    const drop = time.at(random.int(50, 4_000), () => dropped.abort())
    try {
      for await (const entry of this.#streams.durability({ runId, offset: from === '-1' ? null : from }).read(from, dropped.signal))
        s.read.push(entry)
      if (!dropped.signal.aborted) s.readToEnd = true
    } catch (error) {
      this.shared.ledger.note(`client: reading ${runId} failed: ${String(error).slice(0, 200)}`)
    } finally {
      time.clear(drop)
    }
    if (!s.readToEnd) time.at(random.int(10, 1_000), () => void this.#readStream(s, runId))
  }

  async #handOff(s: SimSessionState): Promise<void> {
    if (s.object?.status !== 'running') return
    await s.object.handOff().catch((error: unknown) => this.#refused('handOff', error))
  }

  async #cancel(s: SimSessionState): Promise<void> {
    if (s.deleteRequested) return
    const machine = this.#machine()
    let session: Session | undefined
    s.opening++
    try {
      session = await machine.host.open({ sessionId: s.plan.id, harness: 'sim', secrets: { api: SIM_SECRET } })
      await session.cancel('cancelled by the simulated client')
    } catch (error) {
      this.#refused('cancel', error)
    } finally {
      await session?.close().catch((error: unknown) => this.#refused('close', error))
      s.opening--
    }
  }

  async #delete(s: SimSessionState): Promise<void> {
    if (s.deleted) return
    // Not while this client's own send or cancel runs: that open could make the session again, as the client asked.
    if (s.sending || s.opening > 0) {
      this.shared.time.at(500, () => void this.#delete(s))
      return
    }
    s.deleteRequested = true
    try {
      await this.#machine().host.delete({ sessionId: s.plan.id })
      s.deleted = true
    } catch (error) {
      this.#refused('delete', error)
      this.shared.time.at(this.shared.random.int(500, 2_000), () => void this.#delete(s))
    }
  }

  /** The person: now and then answers open questions and decides open approvals, from any host. */
  #person(): void {
    const { time, random } = this.shared
    time.at(random.int(300, 1_500), () => this.#person())
    for (const s of this.sessions) {
      if (s.deleteRequested) continue
      const records = this.shared.ledger.records(s.plan.id)
      for (const ask of openQuestions(records)) void this.#answer(s, ask)
      for (const toolCallId of openApprovals(records)) void this.#approve(s, toolCallId)
    }
  }

  async #answer(s: SimSessionState, ask: LogRecord): Promise<void> {
    const { random } = this.shared
    const questionId = `${String(ask.toolCallId)}:${String(ask.name)}`
    // While faults are on, some answers are wrong: the wrong type (refused), or 13 (passes the schema, fails the tool's refine).
    const kind = this.shared.faultsOn() ? random.pick(['good', 'good', 'wrong', 'refined', 'twice']) : 'good'
    const verified = /^verify:\d+:(.*)$/.exec(String(ask.name))
    // A question of a step whose verify could not tell: the person looks in the mailer's outbox and tells the truth.
    const truth = verified && effectOf(this.shared.ledger, `${s.plan.id}:${String(ask.toolCallId)}:${verified[1]}`)
    const answer = verified
      ? truth
        ? { decision: 'done', value: truth.done }
        : { decision: 'run-again' }
      : kind === 'wrong'
        ? { n: 'seven' }
        : kind === 'refined'
          ? { n: 13 }
          : { n: random.int(1, 9) }
    const answerOn = async (machine: SimMachine, value: unknown) => {
      await machine.host
        .answer({ sessionId: s.plan.id, questionId, answer: value })
        .catch((error: unknown) => this.#refused('answer', error))
    }
    if (kind === 'twice') {
      await Promise.all([answerOn(this.#machine(), answer), answerOn(this.#machine(), random.chance(0.5) ? answer : { n: 2 })])
    } else {
      await answerOn(this.#machine(), answer)
    }
  }

  async #approve(s: SimSessionState, toolCallId: string): Promise<void> {
    const { random } = this.shared
    const decide = (approved: boolean) =>
      this.#machine()
        .host.approve({ sessionId: s.plan.id, toolCallId, approved })
        .catch((error: unknown) => this.#refused('approve', error))
    // A race of two people deciding at once, now and then.
    if (random.chance(0.3)) await Promise.all([decide(true), decide(false)])
    else await decide(random.chance(0.7))
  }
}

/** The questions of a log without an answer yet (a rejected answer opens its question again). */
function openQuestions(records: readonly LogRecord[]): LogRecord[] {
  const asks = new Map<string, LogRecord>()
  const open = new Map<string, LogRecord>()
  for (const r of records) {
    const id = `${String(r.toolCallId)}:${String(r.name)}`
    if (r.type === 'harness.ask') asks.set(id, r)
    if (r.type === 'harness.ask' || r.type === 'harness.answer.rejected') {
      const ask = asks.get(id)
      if (ask) open.set(id, ask)
    } else if (r.type === 'harness.answer') open.delete(id)
    else if (r.type === 'harness.tool.result')
      for (const key of [...open.keys()]) if (key.startsWith(`${String(r.toolCallId)}:`)) open.delete(key)
  }
  return [...open.values()]
}

/** The calls of a log that wait for an approval. */
function openApprovals(records: readonly LogRecord[]): string[] {
  const open = new Set<string>()
  for (const r of records) {
    if (r.type === 'harness.approval.requested') open.add(String(r.toolCallId))
    else if (r.type === 'harness.approval.decided' || r.type === 'harness.tool.result') open.delete(String(r.toolCallId))
  }
  return [...open]
}
