import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QUICK_CONFIG } from '../src/config.js'
import { runCli } from './run-cli.js'
import type { BenchResult, Timing } from '../src/report/result.js'
import { STORE_NAMES } from '../src/targets/target.js'

// The built CLI, as `pnpm bench` runs it: this checks that the bench runs and what it
// writes is well-formed for every store, never what the numbers are.
let run: Awaited<ReturnType<typeof runCli>>
let result: BenchResult
let stdout: string

beforeAll(async () => {
  run = await runCli(['--quick'], 170_000)
  result = run.result
  stdout = run.stdout
})

afterAll(async () => {
  await run?.remove()
})

const isTiming = (t: Timing) => t.samples > 0 && Number.isFinite(t.medianMs) && t.medianMs >= 0 && t.p90Ms >= 0

describe('the quick run', () => {
  it('finishes without a failed section', () => {
    expect(result.version).toBe(1)
    expect(result.mode).toBe('quick')
    expect(result.failures).toEqual([])
    expect(result.machine.nproc).toBeGreaterThan(0)
  })

  it('measures a step and its bare write, with counted requests, on every store', () => {
    expect(result.stepCost.map((r) => r.store)).toEqual([...STORE_NAMES])
    for (const row of result.stepCost) {
      expect(isTiming(row.step) && isTiming(row.bareWrite), row.store).toBe(true)
      expect(row.ratio, row.store).toBeGreaterThan(0)
      expect(row.requestsPerStep.median, row.store).toBeGreaterThanOrEqual(1)
      expect(row.storeCallsPerStep.append, row.store).toBe(1)
      expect(row.commit.records, row.store).toBe(4)
      expect(isTiming(row.commit.store) && isTiming(row.commit.bareWrite), row.store).toBe(true)
    }
  })

  it('reopens a session of every size on every store, with time and memory', () => {
    for (const store of STORE_NAMES) {
      const rows = result.recovery.filter((r) => r.store === store)
      expect(
        rows.map((r) => r.records),
        store,
      ).toEqual(QUICK_CONFIG.recoverySizes)
      for (const row of rows) {
        expect(isTiming(row.open) && isTiming(row.bareRead), store).toBe(true)
        expect(row.peakRssGrowthMB, store).toBeGreaterThanOrEqual(0)
        expect(row.requestsPerOpen, store).toBeGreaterThan(0)
      }
      expect(result.growth.filter((g) => g.store === store)).toHaveLength(QUICK_CONFIG.recoverySizes.length - 1)
    }
  })

  it('measures throughput at every concurrency on every store', () => {
    for (const store of STORE_NAMES) {
      const rows = result.throughput.filter((r) => r.store === store)
      expect(
        rows.map((r) => r.sessions),
        store,
      ).toEqual(QUICK_CONFIG.concurrency)
      for (const row of rows) {
        expect(row.stepsPerSecond > 0 && row.bareWritesPerSecond > 0, store).toBe(true)
        expect(row.cpuMicrosPerStep > 0 && row.bareCpuMicrosPerWrite > 0, store).toBe(true)
        expect(row.ratioSpread[0] <= row.ratio! && row.ratio! <= row.ratioSpread[1], store).toBe(true)
      }
    }
  })

  it('reports each peer as measured or blocked with its error', () => {
    expect(result.peers.map((p) => p.name)).toEqual(['ai-harness step.do', 'DBOS step', 'LangGraph checkpoint put'])
    for (const peer of result.peers) {
      if (peer.status === 'ok') expect(peer.step && isTiming(peer.step), peer.name).toBe(true)
      else expect(peer.error, peer.name).toMatch(/\S/)
    }
    expect(result.peers[0]!.status).toBe('ok')
  })

  it('measures resumable streams on every store: an append against its bare write, reader lag and chunks/s', () => {
    expect((result.streams ?? []).map((r) => r.store)).toEqual([...STORE_NAMES])
    for (const row of result.streams ?? []) {
      expect(isTiming(row.append) && isTiming(row.bareWrite), row.store).toBe(true)
      expect(row.ratio, row.store).toBeGreaterThan(0)
      expect(row.lagSamples, row.store).toBe(row.streams * QUICK_CONFIG.streamsLagChunks)
      expect(row.lagP99Ms, row.store).toBeGreaterThanOrEqual(row.lagP50Ms)
      expect(row.chunksPerSecond, row.store).toBeGreaterThan(0)
    }
  })

  it('prints every section as a table', () => {
    for (const heading of ['### 1.', '### 2.', '### 3.', '### 4.', '### 7.']) expect(stdout).toContain(heading)
    for (const store of STORE_NAMES) expect(stdout).toContain(`| ${store} |`)
  })
})
