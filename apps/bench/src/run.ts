import pg from 'pg'
import { type BenchConfig, newRunId } from './config.js'
import { machineInfo } from './machine.js'
import { progress } from './progress.js'
import type { BenchResult } from './report/result.js'
import { measurePeers } from './sections/peers.js'
import { measurePlainStep } from './sections/plain-step.js'
import { growthOf, measureRecovery } from './sections/recovery.js'
import { measureStepCost } from './sections/step-cost.js'
import { measureThroughput } from './sections/throughput.js'
import { measureHosts } from './sections/hosts.js'
import { measureStreams } from './sections/streams.js'
import { measureTakeover } from './sections/takeover.js'
import { openTarget } from './targets/open-target.js'
import { pgConfig } from './targets/pg-config.js'
import { STORE_NAMES, type StoreName, type Target } from './targets/target.js'

export type SectionName = 'steps' | 'recovery' | 'throughput' | 'hosts' | 'peers' | 'takeover' | 'streams' | 'plain'
export const SECTION_NAMES: readonly SectionName[] = ['steps', 'recovery', 'throughput', 'hosts', 'peers', 'takeover', 'streams', 'plain']

export interface RunOptions {
  stores?: readonly StoreName[]
  sections?: readonly SectionName[]
  /** The commit the plain-step section compares this build with (default: the one before issue #31). */
  baseline?: string
}

/**
 * One run of every section. Stores go one at a time (their service started, measured,
 * dropped), so no store's background work overlaps another's numbers; the peers run
 * last, on a PostgreSQL target of their own. A failing store or section is recorded in
 * `failures` and the run goes on.
 */
export async function runBench(config: BenchConfig, options: RunOptions = {}): Promise<BenchResult> {
  const started = performance.now()
  const runId = newRunId()
  const stores = options.stores ?? STORE_NAMES
  // The recovery-latency section waits out a lease on DynamoDB and S3 (10 s each), and the plain-step one builds another
  // commit from git: not part of a quick run unless asked for.
  const sections = new Set(
    options.sections ?? SECTION_NAMES.filter((name) => config.mode !== 'quick' || (name !== 'takeover' && name !== 'plain')),
  )
  const result: BenchResult = {
    version: 1,
    mode: config.mode,
    runId,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    machine: machineInfo(await postgresVersion()),
    config,
    stepCost: [],
    recovery: [],
    growth: [],
    throughput: [],
    hosts: [],
    peers: [],
    takeover: [],
    streams: [],
    failures: [],
  }
  progress(`run ${runId} (${config.mode}) on ${result.machine.nproc} cores, node ${result.machine.node}`)

  for (const store of stores) {
    let target: Target | undefined
    try {
      progress(`${store}: starting`)
      target = await openTarget(store, runId, config.poolSize)
      const t = target
      if (sections.has('steps')) await attempt(result, 'steps', store, async () => result.stepCost.push(await measureStepCost(t, config)))
      if (sections.has('throughput'))
        await attempt(result, 'throughput', store, async () => result.throughput.push(...(await measureThroughput(t, config))))
      if (sections.has('hosts') && store === 'postgres')
        await attempt(result, 'hosts', store, async () => result.hosts.push(...(await measureHosts(t, config))))
      if (sections.has('takeover') && store !== 'memory')
        await attempt(result, 'takeover', store, async () => result.takeover?.push(...(await measureTakeover(t))))
      if (sections.has('streams'))
        await attempt(result, 'streams', store, async () => result.streams?.push(await measureStreams(t, config)))
      if (sections.has('recovery'))
        await attempt(result, 'recovery', store, async () => {
          const rows = await measureRecovery(t, config)
          result.recovery.push(...rows)
          result.growth.push(...growthOf(rows))
        })
    } catch (error) {
      fail(result, 'setup', store, error)
    } finally {
      await target?.close().catch((error: unknown) => fail(result, 'cleanup', store, error))
    }
  }

  if (sections.has('peers')) {
    progress('peers: ours, DBOS and LangGraph on the same PostgreSQL')
    let target: Target | undefined
    try {
      target = await openTarget('postgres', `${runId}_peers`, config.poolSize)
      const t = target
      await attempt(result, 'peers', 'postgres', async () => {
        result.peers = await measurePeers(t, config, runId)
      })
    } catch (error) {
      fail(result, 'setup', 'peers', error)
    } finally {
      await target?.close().catch((error: unknown) => fail(result, 'cleanup', 'peers', error))
    }
  }
  if (sections.has('plain')) {
    progress('plain step.do: this build and an earlier commit (default: before issue #31), on the memory store')
    await attempt(result, 'plain', 'memory', async () => {
      result.plainStep = await measurePlainStep(config, options.baseline)
    })
  }
  result.durationMs = Math.round(performance.now() - started)
  progress(`done in ${(result.durationMs / 1000).toFixed(1)} s`)
  return result
}

async function attempt(result: BenchResult, section: string, store: string, work: () => Promise<unknown>): Promise<void> {
  progress(`${store}: ${section}`)
  try {
    await work()
  } catch (error) {
    fail(result, section, store, error)
  }
}

function fail(result: BenchResult, section: string, store: string, error: unknown): void {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  progress(`FAILED ${store} ${section}: ${message}`)
  result.failures.push({ section, store, error: message })
}

async function postgresVersion(): Promise<string | null> {
  const client = new pg.Client(pgConfig())
  try {
    await client.connect()
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version')
    return `PostgreSQL ${rows[0]?.server_version ?? '?'}`
  } catch {
    return null
  } finally {
    await client.end().catch(() => {})
  }
}
