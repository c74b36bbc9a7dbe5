import { randomUUID } from 'node:crypto'
import { createHost } from '@tanstack/ai-harness'
import type { BenchConfig } from '../config.js'
import { progress } from '../progress.js'
import type { ThroughputRow } from '../report/result.js'
import { median, round } from '../stats.js'
import type { Target } from '../targets/target.js'
import { type StepSample, stepHarness } from '../workload/step-harness.js'
import { stepRecordBytes } from '../workload/values.js'

/**
 * Section 3. `sessions` sessions run at once on one host, each one tool call of
 * `throughputSteps` steps; the rate is steps over the window from the first step's
 * start to the last step's end. The baseline runs as many writers at once, each
 * doing as many bare writes one after another.
 */
export async function measureThroughput(target: Target, config: BenchConfig): Promise<ThroughputRow[]> {
  const rows: ThroughputRow[] = []
  const k = config.throughputSteps
  for (const sessions of config.concurrency) {
    const ours: Rate[] = []
    const bare: Rate[] = []
    for (let repeat = 0; repeat < config.throughputRepeats; repeat++) {
      if (repeat % 2 === 0) {
        ours.push(await oursRate(target, sessions, k))
        bare.push(await bareRate(target, sessions, k))
      } else {
        bare.push(await bareRate(target, sessions, k))
        ours.push(await oursRate(target, sessions, k))
      }
    }
    // Each repeat pairs a run of ours with a run of the baseline next to it in time, so
    // a drift of the machine moves both; the spread is that of the paired ratios.
    const paired = ours.map((o, i) => o.perSecond / bare[i]!.perSecond)
    const stepsPerSecond = round(median(ours.map((o) => o.perSecond)), 1)
    const bareWritesPerSecond = round(median(bare.map((b) => b.perSecond)), 1)
    const oursCpu = median(ours.map((o) => o.cpuMicros))
    const bareCpu = median(bare.map((b) => b.cpuMicros))
    rows.push({
      store: target.name,
      sessions,
      steps: sessions * k,
      stepsPerSecond,
      bareWritesPerSecond,
      ratio: round(median(paired), 3),
      ratioSpread: [round(Math.min(...paired), 3), round(Math.max(...paired), 3)],
      cpuMicrosPerStep: round(oursCpu, 1),
      bareCpuMicrosPerWrite: round(bareCpu, 1),
      harnessCpuMicrosPerStep: round(oursCpu - bareCpu, 1),
    })
    progress(
      `  ${target.name}: ${sessions} sessions: ${stepsPerSecond} steps/s (bare ${bareWritesPerSecond} writes/s), CPU ${round(oursCpu, 1)} µs/step (bare ${round(bareCpu, 1)} µs/write)`,
    )
  }
  return rows
}

/** A rate, and the process's CPU time (user + system) per step or write while it ran. */
interface Rate {
  perSecond: number
  cpuMicros: number
}

async function oursRate(target: Target, sessions: number, steps: number): Promise<Rate> {
  const samples: StepSample[] = []
  let cpuAtStart: NodeJS.CpuUsage | undefined
  let lastStepCpu: NodeJS.CpuUsage | undefined
  // Every session opens and reaches its tool first; then all start stepping at once,
  // so the window holds steps, not the opening of the slowest session.
  const ready = barrier(sessions)
  const harness = stepHarness({
    calls: 1,
    steps,
    appendRecords: false,
    requests: target.requests,
    storeCalls: () => ({ append: 0, read: 0 }),
    onStep: (sample) => {
      samples.push(sample)
      // The CPU of the stepping window only: not the closing of the sessions after it.
      if (samples.length === sessions * steps && cpuAtStart) lastStepCpu = process.cpuUsage(cpuAtStart)
    },
    beforeSteps: async () => {
      await ready()
      cpuAtStart ??= process.cpuUsage()
    },
  })
  const host = createHost({ store: target.createStore(), harnesses: harness })
  await Promise.all(
    Array.from({ length: sessions }, async () => {
      const session = await host.open({ sessionId: `tp-${randomUUID()}` })
      for await (const _ of session.send('go')) {
        // Drain the stream: the turn runs as it is read.
      }
      await session.close()
    }),
  )
  if (samples.length !== sessions * steps) throw new Error(`expected ${sessions * steps} steps, saw ${samples.length}`)
  const first = Math.min(...samples.map((s) => s.start))
  const last = Math.max(...samples.map((s) => s.end))
  return {
    perSecond: (samples.length / (last - first)) * 1000,
    cpuMicros: cpuPer(lastStepCpu ?? process.cpuUsage(cpuAtStart), samples.length),
  }
}

/** CPU µs per unit of work from a `process.cpuUsage(start)` difference. */
const cpuPer = (usage: NodeJS.CpuUsage, units: number) => (usage.user + usage.system) / units

/** Resolves for everyone once `parties` callers are waiting. */
function barrier(parties: number): () => Promise<void> {
  let waiting = 0
  let release: () => void = () => {}
  const all = new Promise<void>((resolve) => {
    release = resolve
  })
  return () => {
    if (++waiting === parties) release()
    return all
  }
}

async function bareRate(target: Target, writers: number, writes: number): Promise<Rate> {
  const prefix = randomUUID()
  const cpu = process.cpuUsage()
  const start = performance.now()
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < writes; i++) await target.bareWrite(`${prefix}:${w}:${i}`, stepRecordBytes(`step:${i}`))
    }),
  )
  const perSecond = ((writers * writes) / (performance.now() - start)) * 1000
  return { perSecond, cpuMicros: cpuPer(process.cpuUsage(cpu), writers * writes) }
}
