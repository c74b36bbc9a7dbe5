/**
 * One host of the multi-host section in a process of its own: `node hosts-child.js '<job
 * JSON>'`. It opens its sessions (or its bare writers), prints `ready`, waits for `go` on
 * stdin, runs, and prints one JSON line (`HostsChildResult`). Times are epoch ms
 * (`performance.timeOrigin + performance.now()`), so the parent can join the processes' windows.
 */
import { randomUUID } from 'node:crypto'
import { createInterface } from 'node:readline'
import { createHost } from '@tanstack/ai-harness'
import { postgresStore } from '@tanstack/ai-harness-postgres'
import pg from 'pg'
import { pgConfig } from '../targets/pg-config.js'
import { RequestCounter } from '../targets/requests.js'
import { stepHarness } from '../workload/step-harness.js'
import { stepRecordBytes } from '../workload/values.js'

export interface HostsJob {
  mode: 'ours' | 'bare'
  schema: string
  sessions: number
  steps: number
  poolSize: number
}

export interface HostsChildResult {
  units: number
  first: number
  last: number
  cpuMicros: number
}

const now = () => performance.timeOrigin + performance.now()

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as HostsJob
  const pool = new pg.Pool({ ...pgConfig(), max: job.poolSize })
  const go = waitForGo()
  let result: HostsChildResult
  if (job.mode === 'ours') {
    let release: () => void = () => {}
    const started = new Promise<void>((resolve) => {
      release = resolve
    })
    let waiting = 0
    const ends: number[] = []
    let first = Number.POSITIVE_INFINITY
    let cpu: NodeJS.CpuUsage | undefined
    let cpuAtEnd: NodeJS.CpuUsage | undefined
    const harness = stepHarness({
      calls: 1,
      steps: job.steps,
      appendRecords: false,
      requests: new RequestCounter(),
      storeCalls: () => ({ append: 0, read: 0 }),
      onStep: (sample) => {
        first = Math.min(first, performance.timeOrigin + sample.start)
        ends.push(performance.timeOrigin + sample.end)
        if (ends.length === job.sessions * job.steps && cpu) cpuAtEnd = process.cpuUsage(cpu)
      },
      // Every session of this host reaches its tool, then all wait for the parent's go.
      beforeSteps: async () => {
        if (++waiting === job.sessions) {
          process.stdout.write('ready\n')
          await go
          cpu = process.cpuUsage()
          release()
        }
        await started
      },
    })
    const host = createHost({ store: postgresStore({ client: pool, schema: job.schema }), harnesses: harness })
    await Promise.all(
      Array.from({ length: job.sessions }, async () => {
        const session = await host.open({ sessionId: `hosts-${randomUUID()}` })
        for await (const _ of session.send('go')) {
          // The turn runs as the stream is read.
        }
        await session.close()
      }),
    )
    const usage = cpuAtEnd ?? process.cpuUsage(cpu)
    result = { units: ends.length, first, last: Math.max(...ends), cpuMicros: usage.user + usage.system }
  } else {
    const insert = `INSERT INTO "${job.schema}".bare (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1 AS won`
    const prefix = randomUUID()
    process.stdout.write('ready\n')
    await go
    const cpu = process.cpuUsage()
    const first = now()
    await Promise.all(
      Array.from({ length: job.sessions }, async (_, w) => {
        for (let i = 0; i < job.steps; i++) {
          await pool.query({ name: 'bench_hosts_bare', text: insert, values: [`${prefix}:${w}:${i}`, stepRecordBytes(`step:${i}`)] })
        }
      }),
    )
    const usage = process.cpuUsage(cpu)
    result = { units: job.sessions * job.steps, first, last: now(), cpuMicros: usage.user + usage.system }
  }
  await pool.end()
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin })
    lines.on('line', (line) => {
      if (line.trim() === 'go') {
        lines.close()
        // An open stdin would keep this process alive after its work.
        process.stdin.destroy()
        resolve()
      }
    })
  })
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
