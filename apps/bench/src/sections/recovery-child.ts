/**
 * One recovery measurement in a process of its own, so its memory peak is the open's
 * and nothing else's: `node --expose-gc recovery-child.js '<job JSON>'`. Prints one JSON
 * line (`RecoveryChildResult`) on stdout.
 */
import { createHost, defineHarness } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { childAccess } from '../targets/child-access.js'
import type { ChildConnection } from '../targets/target.js'
import { RssSampler } from '../workload/rss-sampler.js'
import { sessionRecords, writeLog } from '../workload/session-log.js'

export interface RecoveryJob {
  connection: ChildConnection
  logId: string
  records: number
  repeats: number
}

export interface RecoveryChildResult {
  openFirstMs: number
  openMs: number[]
  bareReadMs: number[]
  baseRssBytes: number
  peakRssBytes: number
  retainedHeapBytes: number
  requestsPerOpen: number
  entries: number
}

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('Run the recovery child with node --expose-gc.')
const collect = () => {
  gc()
  gc()
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as RecoveryJob
  const access = await childAccess(job.connection)
  // The memory store lives in this process, so its log is written here; the others were written by the parent.
  if (job.connection.store === 'memory') await writeLog(access.createStore(), job.logId, sessionRecords(job.records))
  const harness = defineHarness({ name: 'bench', adapter: scriptedText([]), tools: [] })

  const open = async () => {
    const host = createHost({ store: access.createStore(), harnesses: harness })
    return host.open({ sessionId: job.logId })
  }

  const sampler = new RssSampler()
  collect()
  await sampler.reset()
  const base = process.memoryUsage()
  const before = access.requests.snapshot()
  const start = performance.now()
  const session = await open()
  const openFirstMs = performance.now() - start
  const requestsPerOpen = access.requests.since(before).total
  const peakRssBytes = await sampler.peak()
  await sampler.stop()
  collect()
  const retainedHeapBytes = process.memoryUsage().heapUsed - base.heapUsed
  const entries = (await access.bareRead(job.logId)).length
  await session.close()

  const openMs: number[] = []
  const bareReadMs: number[] = []
  for (let i = 0; i < job.repeats; i++) {
    collect()
    let t = performance.now()
    const again = await open()
    openMs.push(performance.now() - t)
    await again.close()
    collect()
    t = performance.now()
    await access.bareRead(job.logId)
    bareReadMs.push(performance.now() - t)
  }
  await access.close()
  const result: RecoveryChildResult = {
    openFirstMs,
    openMs,
    bareReadMs,
    baseRssBytes: base.rss,
    peakRssBytes,
    retainedHeapBytes,
    requestsPerOpen,
    entries,
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  },
)
