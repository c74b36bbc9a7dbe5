import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { BenchConfig } from '../config.js'
import { progress } from '../progress.js'
import type { HostsRow } from '../report/result.js'
import { median, ratio, round } from '../stats.js'
import type { Target } from '../targets/target.js'
import type { HostsChildResult, HostsJob } from './hosts-child.js'

const CHILD = fileURLToPath(new URL('./hosts-child.js', import.meta.url))

/**
 * Section 5 (PostgreSQL). 1, 2 and 4 host processes, each driving `hostSessions`
 * sessions of one tool call of `throughputSteps` steps, against one PostgreSQL; the
 * baseline is as many processes of as many bare writers. The rate is all processes'
 * steps over the window from the first step's start to the last step's end: where it
 * stops growing with processes, the store is the limit, not the harness.
 */
export async function measureHosts(target: Target, config: BenchConfig): Promise<HostsRow[]> {
  const connection = target.childConnection()
  if (connection.store !== 'postgres') throw new Error('The hosts section runs on PostgreSQL only.')
  const rows: HostsRow[] = []
  for (const processes of config.hostProcesses) {
    const ours: number[] = []
    const bare: number[] = []
    const cpu: number[] = []
    const job = (mode: HostsJob['mode']): HostsJob => ({
      mode,
      schema: connection.schema,
      sessions: config.hostSessions,
      steps: config.throughputSteps,
      poolSize: config.poolSize,
    })
    for (let repeat = 0; repeat < config.hostRepeats; repeat++) {
      const runOurs = async () => {
        const results = await runHosts(processes, job('ours'))
        ours.push(rateOf(results))
        cpu.push(results.reduce((sum, r) => sum + r.cpuMicros, 0) / results.reduce((sum, r) => sum + r.units, 0))
      }
      const runBare = async () => bare.push(rateOf(await runHosts(processes, job('bare'))))
      if (repeat % 2 === 0) {
        await runOurs()
        await runBare()
      } else {
        await runBare()
        await runOurs()
      }
    }
    const stepsPerSecond = round(median(ours), 1)
    const bareWritesPerSecond = round(median(bare), 1)
    rows.push({
      processes,
      sessionsPerProcess: config.hostSessions,
      steps: processes * config.hostSessions * config.throughputSteps,
      stepsPerSecond,
      bareWritesPerSecond,
      ratio: ratio(stepsPerSecond, bareWritesPerSecond),
      cpuMicrosPerStep: round(median(cpu), 1),
    })
    progress(`  postgres: ${processes} host processes: ${stepsPerSecond} steps/s (bare ${bareWritesPerSecond} writes/s)`)
  }
  return rows
}

const rateOf = (results: HostsChildResult[]) => {
  const units = results.reduce((sum, r) => sum + r.units, 0)
  const first = Math.min(...results.map((r) => r.first))
  const last = Math.max(...results.map((r) => r.last))
  return (units / (last - first)) * 1000
}

/** Starts `processes` children, waits until each is ready, tells all to go, collects their results. */
async function runHosts(processes: number, job: HostsJob): Promise<HostsChildResult[]> {
  const children = Array.from({ length: processes }, () => startChild(job))
  await Promise.all(children.map((c) => c.ready))
  for (const c of children) c.go()
  return Promise.all(children.map((c) => c.result))
}

function startChild(job: HostsJob) {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(job)], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    markReady = resolve
  })
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    if (out.includes('ready\n')) markReady()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
  })
  const result = new Promise<HostsChildResult>((resolve, reject) => {
    child.on('error', reject)
    child.on('exit', (code) => {
      markReady()
      const line = out.trim().split('\n').at(-1) ?? ''
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`A hosts child exited with ${code}: ${err.trim() || out.trim()}`))
      else resolve(JSON.parse(line) as HostsChildResult)
    })
  })
  return { ready: Promise.race([ready, result.then(() => undefined)]), go: () => child.stdin.end('go\n'), result }
}
