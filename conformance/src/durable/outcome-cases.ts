import assert from 'node:assert/strict'
import { enumerateAgentCancelCrashPoints, enumerateOutcomeCrashPoints, type OUTCOME_SCENARIOS } from '@tanstack/ai-harness/testing'
import { type CaseContext, defineCase } from '../case.js'

/**
 * Steps whose side effect cannot be made idempotent (`verify`, `once`, `undo`), on the
 * store: the crash points are generated from a run without a crash (before and after each
 * append of the first process), so every write around the intent, the effect, the value
 * and each compensation is one.
 */
/** The appends around the intent, the effect, the value and each compensation (the turn's own writes have cases of their own). */
const STEP_WRITES = /^\[harness\.(step|step\.intent|rollback)\]$/

/** A cancel's writes too: its rollback, its compensations, the call's result and the turn's end. */
const CANCEL_WRITES = /^\[harness\.(step|step\.intent|rollback|tool\.result|turn\.cancelled)\]$/

function crashPointsCase(
  id: string,
  scenario: keyof typeof OUTCOME_SCENARIOS,
  title: string,
  expect: { intents: boolean; rollback: boolean },
  writes = STEP_WRITES,
) {
  return defineCase({
    id,
    title,
    requires: ['leases', 'wakeups'],
    async run(context: CaseContext) {
      const report = await enumerateOutcomeCrashPoints({
        scenario,
        world: async () => ({ clock: context.clock, openStore: (await context.openNamespace()).openStore }),
        select: (write) => writes.test(write),
      })
      assert.deepEqual(report.failures, [], 'every crash point holds')
      const picked = report.writes.filter((w) => writes.test(w))
      assert.equal(report.points.length, 2 * picked.length, 'before and after each append of a step')
      const all = report.writes.join(' ')
      assert.equal(all.includes('harness.step.intent'), expect.intents, `intent records in ${all}`)
      assert.equal(all.includes('harness.rollback'), expect.rollback, `a rollback in ${all}`)
      assert.deepEqual(
        report.points.filter((p) => p.ended !== 'finished').map((p) => `${p.point} ${p.k} ${p.write}: ${p.ended}`),
        [],
        'every cut ends resolved (a person answers what it asks)',
      )
    },
  })
}

/**
 * A cancel of a parent whose agent call runs a child (and, at depth 2, a grandchild) that
 * waits for a person after finished steps with `undo`, cut at every append of the cancel in
 * every session; another process takes over (a host that resumes the parent, then a worker).
 */
const agentCancelCase = defineCase({
  id: 'durable.undo.agent-cancel-crash-points',
  title:
    "a cancel of a parent agent whose child (one and two levels deep) rolls back, cut at every append of the parent and of each child: the parent logs the cancel before anything is undone, the run that takes over (a host, or only a worker) finishes every child's rollback and ends every turn cancelled, no compensation runs twice",
  // No fence needed: a worker's resume of a child and the parent's cancel of it, in one
  // process, are one session object at a time (LocalDrivers), on DynamoDB and S3 too.
  requires: ['leases', 'wakeups'],
  async run(context: CaseContext) {
    for (const [depth, takeOver] of [
      [1, 'host'],
      [1, 'worker'],
      [2, 'worker'],
    ] as const) {
      const report = await enumerateAgentCancelCrashPoints({
        depth,
        takeOver,
        world: async () => ({ clock: context.clock, openStore: (await context.openNamespace()).openStore }),
      })
      assert.deepEqual(report.failures, [], `every crash point holds (depth ${depth}, taken over by a ${takeOver})`)
      assert.equal(report.writes[0], 'parent [harness.rollback]', 'the parent logs the cancel first')
      assert.ok(
        report.writes.includes(`${depth === 1 ? 'child' : 'grandchild'} [harness.rollback]`),
        `the child rolls back: ${report.writes}`,
      )
      assert.equal(report.points.length, 2 * report.writes.length, 'before and after each append of the cancel')
    }
  },
})

export const outcomeCases = [
  crashPointsCase(
    'durable.verify.crash-points',
    'verify',
    'a step with verify, cut at every append: a run after the crash asks verify before sending again, and the mail goes out once',
    { intents: true, rollback: false },
  ),
  crashPointsCase(
    'durable.verify.unknown-asks-a-person',
    'verify-unknown',
    "a step whose verify says 'unknown', cut at every append: nothing runs until a person answers, whose answer decides; the mail goes out once",
    { intents: true, rollback: false },
  ),
  crashPointsCase(
    'durable.once.crash-points',
    'once',
    'a once step, cut at every append: fn never runs again after its intent; the run after the crash throws STEP_OUTCOME_UNKNOWN exactly when the crash cut it',
    { intents: true, rollback: false },
  ),
  crashPointsCase(
    'durable.undo.crash-points',
    'undo',
    'a failed call with compensations, cut at every append (the steps, the rollback, each compensation): the rollback goes on where it stopped and no compensation runs twice',
    { intents: true, rollback: true },
  ),
  crashPointsCase(
    'durable.undo.cancel-crash-points',
    'undo-cancel',
    'a cancel that rolls back a waiting call, cut at every append (the steps, the rollback, each compensation, the result, the end): the run after the crash goes on with the rollback, no compensation runs twice, and the turn ends cancelled without calling the model again',
    { intents: true, rollback: true },
    CANCEL_WRITES,
  ),
  agentCancelCase,
]
