/**
 * Workers across real processes on PostgreSQL: many workers racing for the same wakeups
 * through the database alone, as in production, where no lock in memory is shared.
 *
 * Each scenario has a fresh schema. Worker processes (`worker-child.ts`:
 * `createWorker(...).start()` with a short poll, lease and hold) share it. The test
 * process opens errand sessions (`workers-support.ts`) as the host `starter`: each tool
 * call first sleeps a little (`parkAfterMs: 0`, so the session parks with a wakeup at
 * once and the starter lets it go); a worker wakes it, charges the order, and then, by
 * the session's plan, sleeps again (parks again), asks a person how to send the
 * invoice (parks until the test answers with `host.answer`, a seeded time after it
 * sees the question in the log), and sends the invoice. The billing service keeps its
 * state in PostgreSQL, so it survives a kill, refuses a repeated idempotency key and
 * counts every attempt.
 *
 * 1. Two workers; one is killed with SIGKILL inside a step: right after the k-th step
 *    function starts (any worker's; the one that printed it is the victim) plus a
 *    seeded delay shorter than a billing call. Its sessions come back to the others
 *    when its leases expire (a running session's wakeup sits at its lease's expiry). A
 *    replacement worker starts a seeded time later.
 * 2. One worker with a slow link to the wakeups table (each wakeup write takes 300 ms),
 *    and questions answered the moment the session shows parked: the answer lands
 *    while the worker is still tidying up after parking.
 *
 * The test polls the database, with a deadline, until every session finished its turn
 * (and fails early, naming the session, when one is left with nobody to move it: not
 * finished, no wakeup, no live lease, not waiting for the test). Then, from the
 * database alone: every session finished once with the planned answer; every side
 * effect once per idempotency key, retries refused by it; every log well-formed, with
 * one driver at a time (the fence grows at every change of driver, and every step and
 * receipt was written by the driver of its stretch of the log); no step before the
 * wake time of a sleep before it; and, in 1, the killed worker was cut mid-turn: its
 * stretch of the session it was killed in was taken over by another worker.
 *
 * Replay with the printed seed: WORKERS_SEED=<seed> draws the same plans, answers and
 * kill point (the timing inside them is real, so a replay hits the same neighbourhood).
 */
import { randomInt } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, expect, it } from 'vitest'
import { prng } from './crash-support.js'
import { CHANNELS, orderIdOf, sessionIdOf } from './workers-support.js'
import {
  checkRun,
  closeScenarios,
  dropRun,
  freshRun,
  replayOf,
  type SessionPlan,
  startSessions,
  stopWorkers,
  stretches,
  watchUntilFinished,
  workerErrors,
  type WorkerProcess,
} from './workers-scenario.js'

const SEED = process.env.WORKERS_SEED ? Number(process.env.WORKERS_SEED) : randomInt(2 ** 31)
const SESSIONS = 8
/** The kill comes this long at most after a step's function starts; the function takes at least 100 ms. */
const MAX_KILL_DELAY_MS = 90
const REPLAY = replayOf(SEED)

afterAll(closeScenarios)

it(`two worker processes, sleeps and questions, one worker SIGKILLed mid-turn (seed ${SEED})`, async () => {
  const random = prng(SEED)
  const sessions: SessionPlan[] = Array.from({ length: SESSIONS }, (_, i) => {
    // Kinds in turn: a second sleep; a question; both; neither (only the first sleep).
    const kind = i % 4
    const ask = kind === 1 || kind === 2
    const queueMs = 100 + Math.floor(random() * 500)
    const napMs = kind === 0 || kind === 2 ? 300 + Math.floor(random() * 1_200) : 0
    // A third of the answers go out as soon as the test sees the question, maybe before the session parked.
    const delayMs = random() < 1 / 3 ? 0 : Math.floor(random() * 800)
    const channel = CHANNELS[Math.floor(random() * CHANNELS.length)]!
    return {
      sessionId: sessionIdOf(i),
      args: { orderId: orderIdOf(i), queueMs, napMs, ask },
      answer: ask ? { delayMs, channel } : undefined,
    }
  })
  // The kill: after the k-th step function starts (a clean run has 2 per session), plus a delay inside it.
  const kill = { afterSteps: 1 + Math.floor(random() * SESSIONS), delayMs: Math.floor(random() * MAX_KILL_DELAY_MS) }
  const replacementAfterMs = Math.floor(random() * 1_000)
  console.log(
    `workers test: seed ${SEED}; kill after step ${kill.afterSteps} + ${kill.delayMs} ms, a replacement ${replacementAfterMs} ms later\n  replay: ${REPLAY}`,
  )

  const run = await freshRun('workers_kill', SEED)
  let stepsSeen = 0
  let victimStep: { worker: WorkerProcess; key: string } | undefined
  let chooseVictim: () => void = () => {}
  const victimChosen = new Promise<void>((resolve) => {
    chooseVictim = resolve
  })
  const onStep = (worker: WorkerProcess, key: string) => {
    stepsSeen++
    if (stepsSeen === kill.afterSteps) {
      victimStep = { worker, key }
      chooseVictim()
    }
  }
  await Promise.all([run.startWorker('worker-a', { onStep }), run.startWorker('worker-b', { onStep })].map((w) => w.ready))

  let killedAt: number | undefined
  const killing = (async () => {
    await victimChosen
    await sleep(kill.delayMs)
    const { worker } = victimStep!
    worker.proc.kill('SIGKILL')
    killedAt = performance.now()
    const { code, signal } = await worker.exited
    if (signal !== 'SIGKILL')
      throw new Error(`${run.where()}: ${worker.workerId} ended before the kill (code ${code}, signal ${signal}):\n${worker.stderr}`)
    await sleep(replacementAfterMs)
    await run.startWorker('worker-c', { onStep }).ready
  })()
  killing.catch(() => {})

  const started = performance.now()
  await startSessions(run, sessions)
  const logs = await watchUntilFinished(run, sessions, { answerOn: 'ask', everyMs: 25 })
  const finishedMs = performance.now() - started
  await killing
  await stopWorkers(run)
  const { drivers, attempts, refused } = await checkRun(run, sessions, logs)

  // The killed worker was inside a step of `victimSession`: its stretch there neither
  // parked nor finished, and another worker took the turn over.
  const killedIn = victimStep as { worker: WorkerProcess; key: string } | undefined
  if (!killedIn) throw new Error(`${run.where()}: no worker was killed`)
  const victim = killedIn.worker.workerId
  const victimSession = killedIn.key.split(':')[0]!
  const cut = sessions
    .map(({ sessionId }) => sessionId)
    .filter((sessionId) => {
      const list = stretches(logs.get(sessionId)!)
      return list.some(
        (s, i) =>
          s.host === victim &&
          list[i + 1] !== undefined &&
          list[i + 1]!.host !== victim &&
          !s.entries.some((e) => e.record.type === 'harness.parked' || e.record.type === 'harness.turn.finished'),
      )
    })
  expect(cut, `${run.where()}: ${victim} was killed inside a step of ${victimSession}, and another worker took that turn over`).toContain(
    victimSession,
  )

  console.log(
    `workers test: seed ${SEED}: ${SESSIONS} sessions finished in ${finishedMs.toFixed(0)} ms; ${victim} SIGKILLed at ${killedAt === undefined ? '?' : (killedAt - started).toFixed(0)} ms inside ${killedIn.key}\n` +
      `  stretches driven: ${[...drivers].map(([h, n]) => `${h} ${n}`).join(', ')}; turns cut by the kill and taken over: ${cut.join(', ')}\n` +
      `  billing attempts: ${attempts}, retries refused by their key: ${refused}${workerErrors(run)}`,
  )
  await dropRun(run)
})

it(`an answer that lands while a worker is still parking the session resumes it (seed ${SEED})`, async () => {
  // Questions only, answered the moment the session shows parked, by a worker whose
  // wakeup writes take 300 ms: the answer (and the wakeup it schedules) comes while the
  // worker still tidies up after parking.
  const random = prng(SEED ^ 0x5bd1e995)
  const sessions: SessionPlan[] = Array.from({ length: 3 }, (_, i) => ({
    sessionId: sessionIdOf(i),
    args: { orderId: orderIdOf(i), queueMs: 100 + Math.floor(random() * 300), napMs: 0, ask: true },
    answer: { delayMs: 0, channel: CHANNELS[Math.floor(random() * CHANNELS.length)]! },
  }))
  const run = await freshRun('workers_answer', SEED)
  await run.startWorker('worker-slow', { wakeupLatencyMs: 300 }).ready
  const started = performance.now()
  await startSessions(run, sessions)
  const logs = await watchUntilFinished(run, sessions, { answerOn: 'parked', everyMs: 5 })
  const finishedMs = performance.now() - started
  await stopWorkers(run)
  const { refused } = await checkRun(run, sessions, logs)
  console.log(
    `workers test: seed ${SEED}: ${sessions.length} questions answered at the park, finished in ${finishedMs.toFixed(0)} ms; refused retries: ${refused}${workerErrors(run)}`,
  )
  await dropRun(run)
})
