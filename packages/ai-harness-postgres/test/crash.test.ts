import { randomInt } from 'node:crypto'
import { afterAll, expect, it } from 'vitest'
import { prng } from './crash-support.js'

import {
  admin,
  billingState,
  checkRun,
  closeScenarios,
  cutPoint,
  dropRun,
  freshRun,
  readLogs,
  runAndKill,
  runToEnd,
  SESSIONS,
  topUp,
} from './crash-scenario.js'

const SEED = process.env.CRASH_SEED ? Number(process.env.CRASH_SEED) : randomInt(2 ** 31)
const RUNS = Number(process.env.CRASH_RUNS ?? 24)
/** CRASH_RUN=<n> (with CRASH_SEED) runs only run n of that seed. */
const ONLY_RUN = process.env.CRASH_RUN ? Number(process.env.CRASH_RUN) : undefined
/** Chance that the process which recovers is killed too, before a third one finishes. */
const SECOND_KILL = 0.35
/** The kill comes up to this long after the event it waits for, while the child goes on working. */
const MAX_DELAY_MS = 4

afterAll(closeScenarios)

it(`survives SIGKILL at random moments: ${RUNS} runs of ${SESSIONS} sessions (seed ${SEED})`, async () => {
  const started = performance.now()
  const random = prng(SEED)

  // A run with no kill counts the events of the work (appends and billing calls), and
  // checks the invariants without a crash: nothing retried.
  topUp()
  const calibration = await freshRun('crash_calibrate')
  const clean = await runToEnd(calibration.schema)
  expect(checkRun(await readLogs(calibration.store), await billingState(calibration.schema), 1, 'no kill').refused).toBe(0)
  await dropRun(calibration.schema)
  const events = clean.events
  console.log(
    `crash test: seed ${SEED}, ${RUNS} runs × ${SESSIONS} sessions; a clean run: ${events} events in ${clean.ms.toFixed(0)} ms\n` +
      `  replay: CRASH_SEED=${SEED} npx vitest run --project postgres test/crash.test.ts`,
  )

  const distribution = new Map<string, number>()
  let totalRefused = 0
  let kills = 0
  for (let run = 1; run <= RUNS; run++) {
    // Draw every random number of the run up front, so a replay draws the same ones: the
    // event after which the kill comes (0: before the first), and the time after it.
    const first = { afterEvents: Math.floor(random() * events), delayMs: random() * MAX_DELAY_MS }
    const second = random() < SECOND_KILL
    // The process that recovers has less to do.
    const again = { afterEvents: Math.floor((random() * events) / 2), delayMs: random() * MAX_DELAY_MS }
    const plan = second ? [first, again] : [first]
    if (ONLY_RUN !== undefined && run !== ONLY_RUN) continue
    const { schema, store } = await freshRun(`crash_${run}`)
    const at = (k: (typeof plan)[number]) => `event ${k.afterEvents} + ${k.delayMs.toFixed(1)} ms`
    const where = `CRASH_SEED=${SEED} CRASH_RUN=${run} (killed at ${plan.map(at).join(', then ')})`
    try {
      const points: string[] = []
      for (const kill of plan) {
        const { finishedFirst } = await runAndKill(schema, kill.afterEvents, kill.delayMs)
        kills++
        const logs = await readLogs(store)
        const billing = await billingState(schema)
        const cut = [...logs].map(([id, entries]) => cutPoint(id, entries, billing))
        for (const c of cut) distribution.set(c, (distribution.get(c) ?? 0) + 1)
        points.push(`${at(kill).padStart(18)}${finishedFirst ? ' (after done)' : ''}: ${cut.join(' | ')}`)
      }
      console.log(`run ${String(run).padStart(2)}: kill ${points.join('\n        kill ')}`)
      const { report } = await runToEnd(schema)
      const { refused } = checkRun(await readLogs(store), await billingState(schema), plan.length + 1, where)
      totalRefused += refused
      console.log(`        then ${report.actions.map((a) => a.action).join(',')}; refused retries: ${refused}`)
      const leases = await admin.query(`SELECT log_id FROM "${schema}".harness_leases`) // a row while held
      expect(leases.rows, `${where}: every lease released`).toEqual([])
      const wakeups = await admin.query(`SELECT log_id FROM "${schema}".harness_wakeups`)
      expect(wakeups.rows, `${where}: no wakeup left for a finished session`).toEqual([])
    } finally {
      await dropRun(schema)
    }
  }

  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  const table = [...distribution]
    .sort((a, b) => b[1] - a[1])
    .map(([point, n]) => `  ${String(n).padStart(3)}  ${point}`)
    .join('\n')
  console.log(
    `crash test: seed ${SEED}, ${RUNS} runs, ${kills} kills, ${totalRefused} retries refused by their key, ${seconds} s\n` +
      `where the kills left the ${kills * SESSIONS} sessions:\n${table}`,
  )
})
