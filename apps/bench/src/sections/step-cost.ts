import { randomUUID } from 'node:crypto'
import { createHost } from '@tanstack/ai-harness'
import type { BenchConfig } from '../config.js'
import { progress } from '../progress.js'
import type { StepCostRow } from '../report/result.js'
import { timing } from '../report/timing.js'
import { max, median, ratio } from '../stats.js'
import type { Target } from '../targets/target.js'
import { instrumentedStore } from '../workload/instrumented-store.js'
import { type StepSample, stepHarness } from '../workload/step-harness.js'
import { stepRecordBytes } from '../workload/values.js'

/**
 * Section 1. Rounds alternate "our steps" and "bare writes" on the same client (and
 * swap which goes first), so drift hits both; the first round warms up and is dropped.
 * One session runs at a time, so the requests counted during a step are that step's.
 */
export async function measureStepCost(target: Target, config: BenchConfig): Promise<StepCostRow> {
  const instrumented = instrumentedStore(target.createStore(), target.requests)
  let steps: StepSample[] = []
  const harness = stepHarness({
    calls: config.toolCallsPerRound,
    steps: config.stepsPerCall,
    appendRecords: true,
    requests: target.requests,
    storeCalls: () => ({ ...instrumented.calls }),
    onStep: (sample) => steps.push(sample),
  })
  const host = createHost({ store: instrumented.store, harnesses: harness })
  let bare: number[] = []
  let bareCommit: number[] = []
  let opens: number[] = []
  let turns: number[] = []
  let commitBytes = ''
  const namesBefore = new Map(target.requests.byName)

  const ours = async () => {
    const before = target.requests.snapshot()
    const session = await host.open({ sessionId: `step-${randomUUID()}` })
    opens.push(target.requests.since(before).total)
    const turn = target.requests.snapshot()
    for await (const _ of session.send('go')) {
      // Drain the stream: the turn runs as it is read.
    }
    turns.push(target.requests.since(turn).total)
    await session.close()
  }
  const baseline = async () => {
    const prefix = randomUUID()
    for (let i = 0; i < config.toolCallsPerRound * config.stepsPerCall; i++) {
      const start = performance.now()
      await target.bareWrite(`${prefix}:${i}`, stepRecordBytes(`step:${i}`))
      bare.push(performance.now() - start)
    }
    // The commit's bytes come from a real commit of the warm-up round.
    for (let i = 0; commitBytes !== '' && i < config.toolCallsPerRound; i++) {
      const start = performance.now()
      await target.bareWrite(`${prefix}:commit:${i}`, commitBytes)
      bareCommit.push(performance.now() - start)
    }
  }

  for (let round = 0; round < config.stepRounds; round++) {
    if (round % 2 === 0) {
      await ours()
      await baseline()
    } else {
      await baseline()
      await ours()
    }
    if (round === 0) {
      commitBytes = instrumented.appends.find((a) => a.firstType === 'harness.tool.result')?.bytes ?? ''
      steps = []
      bare = []
      bareCommit = []
      opens = []
      turns = []
      instrumented.appends.length = 0
      await baseline()
      bare = []
      bareCommit = []
    }
  }
  progress(`  ${target.name}: ${steps.length} steps, ${bare.length} bare writes`)

  const stepMs = steps.map((s) => s.end - s.start)
  const commits = instrumented.appends.filter((a) => a.firstType === 'harness.tool.result')
  const stepTiming = timing(stepMs)
  const bareTiming = timing(bare)
  const commitTiming = timing(commits.map((c) => c.ms))
  const bareCommitTiming = timing(bareCommit)
  const names: Record<string, number> = {}
  for (const [name, count] of target.requests.byName) {
    const delta = count - (namesBefore.get(name) ?? 0)
    if (delta > 0) names[name] = delta
  }
  return {
    store: target.name,
    step: stepTiming,
    bareWrite: bareTiming,
    ratio: ratio(stepTiming.medianMs, bareTiming.medianMs),
    commit: {
      records: commits[0]?.records ?? 0,
      bytes: Buffer.byteLength(commitBytes),
      store: commitTiming,
      bareWrite: bareCommitTiming,
      ratio: ratio(commitTiming.medianMs, bareCommitTiming.medianMs),
      requests: median(commits.map((c) => c.requests.total)),
    },
    requestsPerStep: {
      median: median(steps.map((s) => s.requests.total)),
      max: max(steps.map((s) => s.requests.total)),
      reads: max(steps.map((s) => s.requests.reads)),
    },
    storeCallsPerStep: {
      append: max(steps.map((s) => s.storeCalls.append)),
      read: max(steps.map((s) => s.storeCalls.read)),
    },
    requestsPerOpen: median(opens),
    requestsPerTurn: median(turns),
    requestNames: names,
  }
}
