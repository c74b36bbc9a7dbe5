import { toolDefinition } from '@tanstack/ai'
import { z } from 'zod'
import type { BenchConfig } from '../config.js'
import { progress } from '../progress.js'
import type { PlainBuildRow, PlainStepResult } from '../report/result.js'
import { timing } from '../report/timing.js'
import { median, ratio, round } from '../stats.js'
import { buildCommit, dependenciesDiffer, workspaceCommit } from '../workload/build-commit.js'
import { SAMPLE_CALL_ID, SMALL_VALUE } from '../workload/values.js'

/** The commit before issue #31 (verify, once, undo) was merged: the first parent of that merge. */
export const BEFORE_ISSUE_31 = '0e91d372b40b4bbeb882853f6c36a087db81be2e'

/** What a build gives the section: the same few functions of either commit's core and memory store. */
interface Build {
  readonly label: PlainBuildRow['build']
  readonly commit: string
  // The two builds' types are not the same declarations: the calls below use what both have.
  readonly core: { createHost(options: object): any; defineHarness(options: object): any; durableTool(...args: any[]): any }
  readonly scriptedText: (script: unknown) => unknown
  readonly memoryStore: () => any
}

/** One append the harness made while a step ran. */
interface Appended {
  records: number
  bytes: number
}

/**
 * Section 8. A plain `step.do` (no verify, once or undo) on the memory store, on this build
 * and on a build of the commit before issue #31, in one process, rounds alternating which
 * goes first (the first round dropped). Timed from inside the tool around `step.do`, and
 * counted: the appends each step made, their records and bytes, which must be the same
 * on both builds (one append of one record).
 */
export async function measurePlainStep(config: BenchConfig, baseline: string = BEFORE_ISSUE_31): Promise<PlainStepResult> {
  const current: Build = {
    label: 'this build',
    commit: await workspaceCommit(),
    core: await import('@tanstack/ai-harness'),
    scriptedText: (await import('@tanstack/ai-harness/testing')).scriptedText as Build['scriptedText'],
    memoryStore: (await import('@tanstack/ai-harness-memory')).memoryStore,
  }
  const changed = await dependenciesDiffer(baseline)
  if (changed.length > 0)
    throw new Error(`${changed.join(', ')} changed since ${baseline}: its build cannot use this workspace's dependencies`)
  progress(`  building ${baseline.slice(0, 12)} (the core and the memory store)`)
  const built = await buildCommit(baseline)
  try {
    const before: Build = {
      label: baseline === BEFORE_ISSUE_31 ? 'before #31' : 'baseline',
      commit: built.commit,
      core: await import(built.core),
      scriptedText: (await import(built.testing)).scriptedText,
      memoryStore: (await import(built.memory)).memoryStore,
    }
    return await compare([current, before], config)
  } finally {
    await built.remove()
  }
}

async function compare(builds: readonly [Build, Build], config: BenchConfig): Promise<PlainStepResult> {
  const steps = config.plainSteps
  const samples = builds.map(() => ({ ms: [] as number[], appended: [] as Appended[][] }))
  const roundRatios: number[] = []
  const runs = builds.map((build) => plainRun(build, steps))
  for (let round = 0; round < config.plainRounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0]
    const results: Array<Awaited<ReturnType<(typeof runs)[number]>>> = []
    for (const i of order) results[i] = await runs[i]!()
    if (round === 0) continue
    for (const [i, r] of results.entries()) {
      samples[i]!.ms.push(...r.ms)
      samples[i]!.appended.push(...r.appended)
    }
    roundRatios.push(ratio(median(results[0]!.ms), median(results[1]!.ms)) ?? Number.NaN)
  }
  progress(`  plain step: ${samples[0]!.ms.length} steps per build`)
  const rows = builds.map((build, i): PlainBuildRow => {
    const appended = samples[i]!.appended
    return {
      build: build.label,
      commit: build.commit,
      step: timing(samples[i]!.ms),
      appendsPerStep: distinct(appended.map((a) => a.length)),
      recordsPerAppend: distinct(appended.flatMap((a) => a.map((x) => x.records))),
      bytesPerStep: distinct(appended.map((a) => a.reduce((sum, x) => sum + x.bytes, 0))),
    }
  })
  const [ours, theirs] = rows as [PlainBuildRow, PlainBuildRow]
  const sorted = roundRatios.filter(Number.isFinite).sort((a, b) => a - b)
  return {
    store: 'memory',
    builds: rows,
    ratio: ratio(ours.step.medianMs, theirs.step.medianMs),
    roundRatio: { median: round(median(sorted), 3), spread: [sorted[0] ?? Number.NaN, sorted.at(-1) ?? Number.NaN] },
    sameWrites:
      same(ours.appendsPerStep, theirs.appendsPerStep) &&
      same(ours.recordsPerAppend, theirs.recordsPerAppend) &&
      same(ours.bytesPerStep, theirs.bytesPerStep),
  }
}

/** A host on a fresh memory store of `build`; each call runs one session whose tool runs `steps` plain steps. */
function plainRun(build: Build, steps: number) {
  const appends: Appended[] = []
  const inner = build.memoryStore()
  // Every append the harness makes, as the store got it: a step's are the ones while it ran.
  const store = Object.create(inner)
  store.append = (logId: string, expectedSeq: number, records: readonly object[]) => {
    appends.push({ records: records.length, bytes: Buffer.byteLength(JSON.stringify(records)) })
    return inner.append(logId, expectedSeq, records)
  }
  let ms: number[] = []
  let appended: Appended[][] = []
  const work = build.core.durableTool(
    toolDefinition({ name: 'work', description: 'Runs plain steps', inputSchema: z.object({}) }),
    async (_args: unknown, { step }: { step: { do(name: string, fn: () => unknown): Promise<unknown> } }) => {
      for (let i = 0; i < steps; i++) {
        const from = appends.length
        const start = performance.now()
        await step.do(`step:${i}`, () => SMALL_VALUE)
        ms.push(performance.now() - start)
        appended.push(appends.slice(from))
      }
      return { ok: true }
    },
  )
  const adapter = build.scriptedText(({ messages }: { messages: Array<{ role: string }> }) =>
    messages.at(-1)?.role === 'user' ? { toolCalls: [{ id: SAMPLE_CALL_ID, name: 'work', args: {} }] } : 'done',
  )
  const host = build.core.createHost({ store, harnesses: build.core.defineHarness({ name: 'plain', adapter, tools: [work] }) })
  let n = 0
  return async () => {
    ms = []
    appended = []
    const session = await host.open({ sessionId: `plain-${n++}` })
    for await (const _ of session.send('go')) {
      // Drain the stream: the turn runs as it is read.
    }
    await session.close()
    return { ms, appended }
  }
}

/** The distinct values, sorted: one value when every step did the same. */
function distinct(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b)
}

const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => v === b[i])
