import { randomUUID } from 'node:crypto'
import { createHost } from '@tanstack/ai-harness'
import type { BenchConfig } from '../config.js'
import type { Peer, PeerStep } from '../peers/peer.js'
import { startDbos } from '../peers/dbos.js'
import { startLangGraph } from '../peers/langgraph.js'
import { progress } from '../progress.js'
import type { PeerRow } from '../report/result.js'
import { timing } from '../report/timing.js'
import { median, ratio } from '../stats.js'
import type { Target } from '../targets/target.js'
import { stepHarness } from '../workload/step-harness.js'

const WHAT = {
  ours: 'step.do in a durable tool: one append of a harness.step record (PostgresStore on pg.Pool)',
  dbos: 'DBOS.runStep inside a registered workflow (@dbos-inc/dbos-sdk 5.3.0, system tables in their own schema)',
  langgraph: 'PostgresSaver.put of a checkpoint whose new channel holds the value (@langchain/langgraph-checkpoint-postgres 1.0.5)',
} as const

/** Ours on the PostgreSQL target, as a peer: one session per round, steps timed inside the tool. */
function oursOn(target: Target, steps: number): Peer {
  let samples: PeerStep[] = []
  const harness = stepHarness({
    calls: 1,
    steps,
    appendRecords: false,
    requests: target.requests,
    storeCalls: () => ({ append: 0, read: 0 }),
    onStep: (s) => samples.push({ ms: s.end - s.start, requests: s.requests.total }),
  })
  const host = createHost({ store: target.createStore(), harnesses: harness })
  return {
    async round(n) {
      if (n !== steps) throw new Error(`this harness runs ${steps} steps per round, not ${n}`)
      samples = []
      const session = await host.open({ sessionId: `peer-${randomUUID()}` })
      for await (const _ of session.send('go')) {
        // Drain the stream: the turn runs as it is read.
      }
      await session.close()
      return samples
    },
    close: async () => {},
  }
}

/**
 * Section 4. Ours, DBOS and LangGraph take turns on the same PostgreSQL, round by
 * round, in a rotating order; the first round warms each up and is dropped. A peer
 * that cannot start here is reported as blocked with its error.
 */
export async function measurePeers(postgres: Target, config: BenchConfig, runId: string): Promise<PeerRow[]> {
  const contenders: Array<{ key: keyof typeof WHAT; name: PeerRow['name']; start: () => Promise<Peer> }> = [
    { key: 'ours', name: 'ai-harness step.do', start: async () => oursOn(postgres, config.stepsPerCall) },
    { key: 'dbos', name: 'DBOS step', start: () => startDbos(runId, config.poolSize) },
    { key: 'langgraph', name: 'LangGraph checkpoint put', start: () => startLangGraph(runId, config.poolSize) },
  ]
  const running: Array<{ key: keyof typeof WHAT; name: PeerRow['name']; peer: Peer; samples: PeerStep[] }> = []
  const rows: PeerRow[] = []
  for (const c of contenders) {
    try {
      running.push({ key: c.key, name: c.name, peer: await c.start(), samples: [] })
    } catch (error) {
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      progress(`  ${c.name} is blocked: ${message}`)
      rows.push({ name: c.name, status: 'blocked', error: message, ratioToOurs: null, what: WHAT[c.key] })
    }
  }
  try {
    for (let round = 0; round < config.peerRounds; round++) {
      for (let i = 0; i < running.length; i++) {
        const r = running[(round + i) % running.length]!
        const samples = await r.peer.round(config.stepsPerCall)
        if (round > 0) r.samples.push(...samples)
      }
    }
  } finally {
    for (const r of running) await r.peer.close().catch((error) => progress(`  closing ${r.name} failed: ${String(error)}`))
  }
  const ours = running.find((r) => r.key === 'ours')
  const oursMedian = ours ? timing(ours.samples.map((s) => s.ms)).medianMs : null
  for (const r of running) {
    const step = timing(r.samples.map((s) => s.ms))
    rows.push({
      name: r.name,
      status: 'ok',
      step,
      ratioToOurs: ratio(step.medianMs, oursMedian),
      requestsPerStep: median(r.samples.map((s) => s.requests)),
      what: WHAT[r.key],
    })
    progress(`  ${r.name}: ${step.medianMs} ms per step`)
  }
  const order = contenders.map((c) => c.name)
  return rows.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name))
}
