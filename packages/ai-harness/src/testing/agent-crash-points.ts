import { toolDefinition } from '@tanstack/ai'
import { z } from 'zod'
import type { ManualClock } from '../contract/clock.js'
import type { HarnessStore, LeaseStore, LogEntry, LogRecord, WakeupStore } from '../contract/types.js'
import { agentTool, childSessionId } from '../runtime/agent-tool.js'
import { durableTool } from '../runtime/durable-tool.js'
import { defineHarness, type Harness } from '../runtime/harness.js'
import { createHost, type Host } from '../runtime/host.js'
import { createWorker, type Worker } from '../runtime/worker.js'
import { scriptedText } from './scripted-adapter.js'
import { drain } from './streams.js'

/** One data set with its clock: every `openStore()` is another process on it. */
export interface CrashWorld {
  readonly clock: ManualClock
  /** A new store instance on the world's data, as another process would open it. */
  openStore(): Promise<HarnessStore>
  /** Frees what the world holds (a schema, a pool); called once the run is checked. */
  close?(): Promise<void>
}

/**
 * How the runs differ: `same-time` leases of parent and child expire together;
 * `staggered` the child's lease is taken half a lease later than the parent's, so the
 * parent's expires first and its recovery meets a child still held by the dead host;
 * `two-workers` two workers poll at once after the crash, one wakeup each per poll.
 */
export type CrashVariant = 'same-time' | 'staggered' | 'two-workers'

export interface AgentCrashOptions {
  /** A fresh world for each run (one per crash point, plus the run that counts the writes). */
  world: () => Promise<CrashWorld>
  /** 1: an agent tool whose child asks a person. 2: an agent tool whose child calls that agent tool. */
  depth?: 1 | 2
  variant?: CrashVariant
  /** Only these crash points (write numbers, from 1), to look at one. Default: every write. */
  points?: readonly number[]
  /**
   * Only the crash points whose write this picks, by its description (e.g.
   * `append boss/agent/call_1 [harness.parked]`); applied after `points`. Default: all.
   */
  select?: (write: string) => boolean
  /** Crash points run at once, each on its own world. Default 1. */
  concurrency?: number
  /** The lease of every host and worker. Default 30 s (the clock is manual: nothing waits for it). */
  leaseMs?: number
}

export interface CrashPointResult {
  /** The crash came right after this write (1-based) of the first process. */
  readonly k: number
  /** What that write was, e.g. `append boss [harness.step]` or `leases.release boss/agent/…`. */
  readonly write: string
  /** What the parent's call ended with: the child's answer, or the tool error of a cut. */
  readonly outcome: 'result' | 'cut'
  /** Sessions a worker found held by another host after the crash (a dead host's lease not yet expired). */
  readonly busy: number
}

export interface AgentCrashReport {
  /** Mutating store calls (appends, lease and wakeup calls, claims) of the run without a crash. */
  readonly writes: number
  readonly points: CrashPointResult[]
  /** One line per broken invariant, naming the crash point; empty when every point held. */
  readonly failures: string[]
}

const PARENT = 'boss'
const CHILD_TEXT = 'The helper is done.'
const MIDDLE_TEXT = 'The middle is done.'
const MUTATING = new Set([
  'append',
  'delete',
  'leases.acquire',
  'leases.renew',
  'leases.release',
  'wakeups.schedule',
  'wakeups.cancel',
  'wakeups.claim',
])

/** A store whose process dies right after its `crashAfter`-th write: from then on every call (and that write's reply) hangs. */
class DyingStore {
  writes: string[] = []
  crashed = false
  readonly whenCrashed: Promise<void>
  #crash: () => void = () => {}
  readonly store: HarnessStore

  constructor(
    inner: HarnessStore,
    private readonly crashAfter: number,
  ) {
    this.whenCrashed = new Promise((resolve) => {
      this.#crash = resolve
    })
    const hang = <T>() => new Promise<T>(() => {})
    const call = <A extends unknown[], R>(op: string, fn: (...args: A) => Promise<R>, about: (...args: A) => string) => {
      return async (...args: A): Promise<R> => {
        if (this.crashed) return hang()
        const result = await fn(...args)
        if (this.crashed) return hang()
        if (MUTATING.has(op)) {
          this.writes.push(`${op} ${about(...args)}`)
          if (this.writes.length === this.crashAfter) {
            this.crashed = true
            this.#crash()
            return hang()
          }
        }
        return result
      }
    }
    const id = (logId: unknown) => String(logId)
    const leases: LeaseStore | undefined = inner.leases && {
      acquire: call('leases.acquire', (logId: string, owner: string, ttl: number) => inner.leases!.acquire(logId, owner, ttl), id),
      renew: call(
        'leases.renew',
        (lease, ttl: number) => inner.leases!.renew(lease, ttl),
        (lease) => lease.logId,
      ),
      release: call(
        'leases.release',
        (lease) => inner.leases!.release(lease),
        (lease) => lease.logId,
      ),
    }
    const wakeups: WakeupStore | undefined = inner.wakeups && {
      schedule: call('wakeups.schedule', (logId: string, at: number) => inner.wakeups!.schedule(logId, at), id),
      cancel: call('wakeups.cancel', (logId: string) => inner.wakeups!.cancel(logId), id),
      due: call(
        'wakeups.due',
        (limit: number) => inner.wakeups!.due(limit),
        () => '',
      ),
      claim: call(
        'wakeups.claim',
        (limit: number, holdMs: number) => inner.wakeups!.claim(limit, holdMs),
        () => '',
      ),
    }
    this.store = {
      limits: inner.limits,
      leases,
      wakeups,
      ...(inner.now
        ? {
            now: call(
              'now',
              () => inner.now!(),
              () => '',
            ),
          }
        : {}),
      append: call(
        'append',
        (logId: string, expectedSeq: number, records: LogRecord[], options?: unknown) =>
          inner.append(logId, expectedSeq, records, options as never),
        (logId, _seq, records) => `${logId} [${records.map((r) => r.type).join(',')}]`,
      ),
      read: call('read', (logId: string, options?: { after?: number; limit?: number }) => inner.read(logId, options), id),
      delete: call('delete', (logId: string) => inner.delete(logId), id),
      // A dead process closes nothing; the world frees the data.
      close: () => Promise.resolve(),
    } as HarnessStore
  }
}

/** The agents of the scenario; every step function notes its idempotency key and whether the first process was dead then. */
function agents(depth: 1 | 2, effects: Array<{ key: string; afterCrash: boolean }>, crashed: () => boolean, onParentCall: () => void) {
  const confirm = durableTool(
    toolDefinition({ name: 'confirm', description: 'Asks a person', inputSchema: z.object({}) }),
    async (_a, { step }) => {
      await step.do('before', ({ idempotencyKey }) => {
        effects.push({ key: idempotencyKey, afterCrash: crashed() })
        return 'prepared'
      })
      const answer = await step.ask({ name: 'ok', message: 'Go ahead?', schema: z.object({ ok: z.boolean() }) })
      await step.do('after', ({ idempotencyKey }) => {
        effects.push({ key: idempotencyKey, afterCrash: crashed() })
        return 'shipped'
      })
      return answer.ok ? 'confirmed' : 'declined'
    },
  )
  const helper = defineHarness({
    name: 'helper',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : CHILD_TEXT,
    ),
    tools: [confirm],
  })
  const delegateTo = (harness: Harness) =>
    agentTool(
      toolDefinition({ name: 'delegate', description: 'Hands a task to another agent', inputSchema: z.object({ task: z.string() }) }),
      {
        harness,
        prompt: ({ task }) => `Please do: ${task}`,
      },
    )
  const middle = defineHarness({
    name: 'middle',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'delegate', args: { task: 'ship' } }] } : MIDDLE_TEXT,
    ),
    tools: [delegateTo(helper)],
  })
  const boss = defineHarness({
    name: PARENT,
    adapter: scriptedText(({ messages }) => {
      if (messages.at(-1)?.role !== 'user') return 'All delegated.'
      onParentCall()
      return { toolCalls: [{ name: 'delegate', args: { task: 'ship' } }] }
    }),
    tools: [delegateTo(depth === 2 ? middle : helper)],
  })
  return { harnesses: depth === 2 ? [boss, middle, helper] : [boss, helper], childText: depth === 2 ? MIDDLE_TEXT : CHILD_TEXT }
}

/** A session's log and what it says, read with a store that does not crash. */
interface SessionView {
  readonly id: string
  readonly entries: LogEntry[]
  readonly records: Array<LogRecord & Record<string, unknown>>
}

async function view(store: HarnessStore, id: string): Promise<SessionView> {
  const entries: LogEntry[] = []
  // A store may answer with short pages: only an empty one ends the log.
  for (;;) {
    const page = await store.read(id, { after: entries.length, limit: 1000 })
    if (page.length === 0) break
    entries.push(...page)
  }
  return { id, entries, records: entries.map((e) => e.record as LogRecord & Record<string, unknown>) }
}

/** The agent calls of a session (every `delegate` call), in order. */
function agentCalls(v: SessionView): string[] {
  return v.records
    .filter((r) => r.type === 'harness.assistant')
    .flatMap((r) => (r.toolCalls as Array<{ id: string; name: string }>).filter((c) => c.name === 'delegate').map((c) => c.id))
}

/** The session tree: the parent, its child, and (two levels) the grandchild. */
async function tree(store: HarnessStore): Promise<SessionView[]> {
  const views = [await view(store, PARENT)]
  for (let i = 0; i < views.length; i++) {
    for (const call of agentCalls(views[i]!)) views.push(await view(store, childSessionId(views[i]!.id, call)))
  }
  return views
}

const openTurn = (v: SessionView) => {
  let open = false
  for (const r of v.records) {
    if (r.type === 'harness.turn.started') open = true
    if (r.type === 'harness.turn.finished' || r.type === 'harness.turn.cancelled') open = false
  }
  return open
}
/** Whether the session's last turn ended as finished (not cancelled, not open). */
const finished = (v: SessionView) =>
  v.records.findLast((r) => r.type.startsWith('harness.turn.') && r.type !== 'harness.turn.resumed')?.type === 'harness.turn.finished'
/** Whether a session's first turn was logged: before that, nothing of it ran. */
const started = (v: SessionView | undefined) => v?.records.some((r) => r.type === 'harness.turn.started') === true
const resultOf = (v: SessionView, callId: string) => v.records.filter((r) => r.type === 'harness.tool.result' && r.toolCallId === callId)

/**
 * Whether a session waits for a person: a question in its open turn (answered or not:
 * the call goes on after the answer), a parked call, or an agent call whose child waits
 * (or finished: the session goes on with its answer).
 */
function waiting(v: SessionView, views: readonly SessionView[]): boolean {
  if (!openTurn(v)) return false
  const settled = new Set(v.records.filter((r) => r.type === 'harness.tool.result').map((r) => String(r.toolCallId)))
  if (v.records.some((r) => (r.type === 'harness.ask' || r.type === 'harness.parked') && !settled.has(String(r.toolCallId)))) return true
  return agentCalls(v).some((call) => {
    if (settled.has(call)) return false
    const child = views.find((c) => c.id === childSessionId(v.id, call))
    return child !== undefined && (finished(child) || waiting(child, views))
  })
}

/** Open questions of the tree (asked, not answered, in an open turn). */
function openQuestions(views: readonly SessionView[]): Array<{ sessionId: string; questionId: string }> {
  const open: Array<{ sessionId: string; questionId: string }> = []
  for (const v of views) {
    if (!openTurn(v)) continue
    for (const ask of v.records.filter((r) => r.type === 'harness.ask')) {
      const answered = v.records.some((r) => r.type === 'harness.answer' && r.toolCallId === ask.toolCallId && r.name === ask.name)
      if (!answered) open.push({ sessionId: v.id, questionId: `${String(ask.toolCallId)}:${String(ask.name)}` })
    }
  }
  return open
}

/** Dense seqs from 1, records that parse as JSON objects with a type, opened first, one result per call. */
function wellFormed(v: SessionView): string | undefined {
  for (const [i, e] of v.entries.entries()) {
    if (e.seq !== i + 1) return `seq ${e.seq} at position ${i + 1}`
    const record = e.record as unknown
    if (typeof record !== 'object' || record === null || typeof (record as { type?: unknown }).type !== 'string')
      return `record ${e.seq} has no type`
    if (JSON.stringify(JSON.parse(JSON.stringify(record))) !== JSON.stringify(record)) return `record ${e.seq} is not JSON`
  }
  if (v.entries.length > 0 && v.records[0]!.type !== 'harness.session.opened') return `first record is ${v.records[0]!.type}`
  const results = v.records.filter((r) => r.type === 'harness.tool.result').map((r) => String(r.toolCallId))
  if (new Set(results).size !== results.length) return 'a tool call has two results'
  const calls = new Set(
    v.records.filter((r) => r.type === 'harness.assistant').flatMap((r) => (r.toolCalls as Array<{ id: string }>).map((c) => c.id)),
  )
  const unknown = results.find((id) => !calls.has(id))
  if (unknown) return `a result for the unknown call ${unknown}`
  return undefined
}

// long: one crash point told in order (first process up to the crash, the other hosts and workers, the checks); its parts share the world's state
async function runOnce(options: Required<Omit<AgentCrashOptions, 'points' | 'concurrency' | 'select'>>, crashAfter: number) {
  const world = await options.world()
  const { clock } = world
  const { leaseMs, variant, depth } = options
  const effects: Array<{ key: string; afterCrash: boolean }> = []
  const dying = new DyingStore(await world.openStore(), crashAfter)
  const { harnesses, childText } = agents(
    depth,
    effects,
    () => dying.crashed,
    () => {
      // The child's lease is taken half a lease after the parent's: the two expire at different times.
      if (variant === 'staggered' && !dying.crashed) clock.advance(leaseMs / 2)
    },
  )
  const timings = { leaseMs, stopTimeoutMs: 50 }
  const first = {
    host: createHost({ store: dying.store, harnesses, clock, hostId: 'first', ...timings }),
    worker: createWorker({ store: dying.store, harnesses, clock, workerId: 'first-worker', ...timings }),
  }
  const direct = await world.openStore()
  // The first process: the parent's turn, the person's answer, a worker finishing the work.
  const script = (async () => {
    const session = await first.host.open({ sessionId: PARENT, harness: PARENT })
    await drain(session.send('ship it'))
    await session.close()
    for (let i = 0; i < 20; i++) {
      for (const q of openQuestions(await tree(direct))) await first.host.answer({ ...q, answer: { ok: true } })
      const polled = await first.worker.poll()
      if (polled.resumed.length + polled.busy.length + polled.failed.length + polled.idle.length === 0) break
    }
  })()
  const crashedFirst = await Promise.race([script.then(() => false), dying.whenCrashed.then(() => true)])
  const atCrash = await tree(direct)
  const atCrashEffects = effects.length
  const failures: string[] = []
  // The second process: a host that answers, and workers, on stores of their own.
  const second: { host: Host; workers: Worker[] } = {
    host: createHost({ store: await world.openStore(), harnesses, clock, hostId: 'second', ...timings }),
    workers: [],
  }
  const workerCount = variant === 'two-workers' ? 2 : 1
  for (let i = 0; i < workerCount; i++) {
    second.workers.push(
      createWorker({
        store: await world.openStore(),
        harnesses,
        clock,
        workerId: `worker-${i + 1}`,
        batchSize: workerCount === 2 ? 1 : 10,
        ...timings,
      }),
    )
  }
  const answered: string[] = []
  let finishedAt = -1
  let busy = 0
  for (let round = 0; round < 40; round++) {
    for (const q of openQuestions(await tree(direct))) {
      try {
        await second.host.answer({ ...q, answer: { ok: true } })
        answered.push(q.sessionId)
      } catch {
        // Refused: the turn ended (a cut child), or the question was answered meanwhile.
      }
    }
    const polls = await Promise.all(second.workers.map((w) => w.poll()))
    for (const p of polls) busy += p.busy.length
    const parent = await view(direct, PARENT)
    if (!openTurn(parent) && (finished(parent) || !started(parent))) {
      const due = (await direct.wakeups?.due(10)) ?? []
      if (polls.every((p) => p.resumed.length + p.busy.length + p.failed.length === 0) && due.length === 0) {
        finishedAt = round
        // Far in the future, a poll must find nothing left to do either.
        clock.advance(10 * leaseMs)
        const late = await Promise.all(second.workers.map((w) => w.poll()))
        if (late.some((p) => p.resumed.length > 0))
          failures.push(`a session was resumed after everything finished: ${JSON.stringify(late)}`)
        break
      }
    }
    // A third of a lease at a time: a lease that expires earlier is taken over earlier.
    clock.advance(Math.ceil(leaseMs / 3))
  }
  // A cut child takes no answer: try every question of the tree that has none.
  const parentNow = await view(direct, PARENT)
  if (parentNow.records.some((r) => r.type === 'harness.tool.result' && r.cut === true)) {
    for (const v of (await tree(direct)).slice(1)) {
      for (const ask of v.records.filter((r) => r.type === 'harness.ask')) {
        if (v.records.some((r) => r.type === 'harness.answer' && r.toolCallId === ask.toolCallId && r.name === ask.name)) continue
        const questionId = `${String(ask.toolCallId)}:${String(ask.name)}`
        const accepted = await second.host.answer({ sessionId: v.id, questionId, answer: { ok: true } }).then(
          () => true,
          () => false,
        )
        if (accepted) answered.push(v.id)
      }
    }
  }
  const end = await tree(direct)
  const k = crashFirstLabel(crashedFirst, crashAfter)
  const write = dying.writes[crashAfter - 1] ?? '(no crash: the run without a crash)'
  const fail = (what: string) => failures.push(`${k} after ${write}: ${what}`)
  // The first process is dead: only the second one stops.
  for (const w of second.workers) await w.stop().catch(() => {})
  await second.host.shutdown().catch(() => {})

  const parentEnd = end[0]!
  const call = agentCalls(parentEnd)[0]
  let outcome: 'result' | 'cut' = 'result'
  if (finishedAt < 0) fail(`the parent never finished (open turn: ${openTurn(parentEnd)}); logs: ${describe(end)}`)
  for (const v of end) {
    const bad = wellFormed(v)
    if (bad) fail(`log ${v.id} is not well-formed: ${bad}`)
    if (openTurn(v)) fail(`session ${v.id} still has an open turn with nothing to finish it: ${describe([v])}`)
  }
  const startedAtCrash = atCrash[0]!.records.some((r) => r.type === 'harness.turn.started')
  if (!call) {
    // A crash before the turn was logged loses the prompt (the caller got no stream): nothing runs.
    if (startedAtCrash) fail('the parent never called its agent tool')
    if (effects.length > 0 || end.length > 1) fail('a child ran for a prompt that was never logged')
  } else {
    const results = resultOf(parentEnd, call)
    if (results.length !== 1) fail(`the parent's agent call has ${results.length} results`)
    const result = results[0]
    outcome = result?.cut === true ? 'cut' : 'result'
    // What the seed prescribes for the moment of the crash.
    const parentAtCrash = atCrash[0]!
    const childAtCrash = atCrash.find((v) => v.id === childSessionId(PARENT, call))
    const logged = resultOf(parentAtCrash, call)[0]
    const calledAtCrash = agentCalls(parentAtCrash).includes(call)
    const parkedAtCrash = parentAtCrash.records.some((r) => r.type === 'harness.parked' && r.toolCallId === call)
    const expected: 'result' | 'cut' =
      logged !== undefined
        ? logged.cut === true
          ? 'cut'
          : 'result'
        : // A call the crash did not see yet runs as new; one that waits for its child (or whose child waits for a
          // person, or finished) keeps its place; any other is cut, also when its child had not started (SPEC §4:
          // an agent-tool call gets a tool error too, except one waiting for a person).
          !calledAtCrash || parkedAtCrash || (started(childAtCrash) && (finished(childAtCrash!) || waiting(childAtCrash!, atCrash)))
          ? 'result'
          : 'cut'
    if (outcome !== expected)
      fail(
        `the parent's call ended as ${outcome}, the seed says ${expected} (child at the crash: ${childAtCrash ? describe([childAtCrash]) : 'no log'})`,
      )
    if (result && outcome === 'result' && (result.ok !== true || result.result !== childText)) {
      fail(`the parent's call got ${JSON.stringify(result.result)} (ok: ${String(result.ok)}), not the child's answer`)
    }
    if (result && outcome === 'cut' && result.ok !== false) fail('a cut call was not a tool error')
    if (outcome === 'cut') {
      // A cut child never runs again: nothing new in its log (or its children's) but the end of its turn (and the
      // cancel a child with children of its own logs before cancelling them).
      for (const v of end.slice(1)) {
        const before = atCrash.find((c) => c.id === v.id)?.entries.length ?? 0
        const ending = (r: LogRecord) => r.type === 'harness.turn.cancelled' || (r.type === 'harness.rollback' && r.cancel !== null)
        const added = v.records.slice(before).filter((r) => !ending(r))
        if (added.length > 0) fail(`the cut child ${v.id} wrote ${added.map((r) => r.type).join(', ')} after the crash`)
      }
      const ranAgain = effects.slice(atCrashEffects).filter((e) => e.afterCrash)
      if (ranAgain.length > 0) fail(`a step of the cut child ran after the crash: ${ranAgain.map((e) => e.key).join(', ')}`)
      if (answered.length > 0) fail(`an answer to the cut child was accepted (${answered.join(', ')})`)
    } else {
      // Every step of the child ran and is logged once.
      const steps = end.flatMap((v) =>
        v.records.filter((r) => r.type === 'harness.step').map((r) => `${v.id}:${String(r.toolCallId)}:${String(r.name)}`),
      )
      if (new Set(steps).size !== steps.length) fail('a step is logged twice')
      if (!steps.some((s) => s.endsWith(':after'))) fail("the child's step after the question never ran")
    }
  }
  // At most once per key, except a step whose function ran before the crash and whose value the crash lost.
  const loggedAtCrash = new Set(
    atCrash.flatMap((v) =>
      v.records.filter((r) => r.type === 'harness.step').map((r) => `${v.id}:${String(r.toolCallId)}:${String(r.name)}`),
    ),
  )
  const byKey = new Map<string, { before: number; after: number }>()
  for (const e of effects) {
    const count = byKey.get(e.key) ?? { before: 0, after: 0 }
    if (e.afterCrash) count.after++
    else count.before++
    byKey.set(e.key, count)
  }
  for (const [key, count] of byKey) {
    if (count.before > 1 || count.after > 1) fail(`the step ${key} ran ${count.before + count.after} times`)
    if (count.after > 0 && loggedAtCrash.has(key)) fail(`the step ${key} ran again after its value was logged`)
  }
  await direct.close?.()
  await world.close?.()
  return { crashed: crashedFirst, writes: dying.writes, outcome, failures, busy }
}

const crashFirstLabel = (crashed: boolean, k: number) => (crashed ? `crash point ${k}` : 'the run without a crash')

function describe(views: readonly SessionView[]): string {
  return views.map((v) => `${v.id}: ${v.records.map((r) => r.type.replace(/^harness\./, '')).join(' ')}`).join(' | ')
}

/**
 * Runs the agent-tool scenario once to count the first process's writes, then once per
 * write k, with that process dying right after write k (its store hangs from then on:
 * nothing more of it lands), and a second host and worker(s) finishing the work with the
 * clock moved past the dead leases. Checks at each point: one outcome for the parent's
 * call, the one the seed prescribes (the child's answer when the child had finished or
 * was waiting for a person, a cut tool error when it was cut while running); a cut child
 * never runs again and takes no answer; nothing stays open; each step runs at most once
 * per key (twice only when the crash lost its value); every log well-formed.
 */
export async function enumerateAgentCrashPoints(options: AgentCrashOptions): Promise<AgentCrashReport> {
  const resolved = {
    depth: options.depth ?? 1,
    variant: options.variant ?? 'same-time',
    leaseMs: options.leaseMs ?? 30_000,
    world: options.world,
  }
  const reference = await runOnce(resolved, Number.POSITIVE_INFINITY)
  const failures = [...reference.failures]
  if (reference.outcome !== 'result') failures.push("the run without a crash did not give the child's answer")
  const select = options.select ?? (() => true)
  const ks = (options.points ?? reference.writes.map((_, i) => i + 1)).filter((k) => select(reference.writes[k - 1] ?? ''))
  const runs: Array<{ k: number; run: Awaited<ReturnType<typeof runOnce>> }> = []
  // Each point has its own world and clock: several can run at once (a store over the network waits more than it works).
  let next = 0
  const lane = async () => {
    while (next < ks.length) {
      const k = ks[next++]!
      runs.push({ k, run: await runOnce(resolved, k) })
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, lane))
  runs.sort((a, b) => a.k - b.k)
  const points: CrashPointResult[] = []
  for (const { k, run } of runs) {
    if (!run.crashed)
      failures.push(
        `crash point ${k}: the run ended before its write ${k} (it has ${run.writes.length}); the scenario is not deterministic`,
      )
    failures.push(...run.failures)
    points.push({ k, write: run.writes[k - 1] ?? '', outcome: run.outcome, busy: run.busy })
  }
  return { writes: reference.writes.length, points, failures }
}
