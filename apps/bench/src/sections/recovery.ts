import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import type { BenchConfig } from '../config.js'
import { progress } from '../progress.js'
import type { GrowthRow, RecoveryRow } from '../report/result.js'
import { timing } from '../report/timing.js'
import { ratio, round } from '../stats.js'
import type { Target } from '../targets/target.js'
import { sessionRecords, writeLog } from '../workload/session-log.js'
import type { RecoveryChildResult, RecoveryJob } from './recovery-child.js'

const CHILD = fileURLToPath(new URL('./recovery-child.js', import.meta.url))
const MB = 1024 * 1024

/** The hooks a PGlite target has: a child can open its folder only while this process has it closed. */
interface Suspendable {
  suspend(): Promise<void>
  reopen(): Promise<void>
}
const suspendable = (target: Target): target is Target & Suspendable => 'suspend' in target

/**
 * Section 2. For each size the parent writes one finished session with big batches
 * straight through `store.append`, then a fresh process opens it (`host.open`: lease,
 * read of the whole log, fold) and reads the same bytes bare, for the baseline.
 */
export async function measureRecovery(target: Target, config: BenchConfig): Promise<RecoveryRow[]> {
  const rows: RecoveryRow[] = []
  for (const [i, size] of config.recoverySizes.entries()) {
    const logId = `recovery-${size}-${randomUUID()}`
    if (target.name !== 'memory') {
      const batches = await writeLog(target.createStore(), logId, sessionRecords(size))
      progress(`  ${target.name}: wrote ${size} records in ${batches} appends`)
    }
    const job: RecoveryJob = { connection: target.childConnection(), logId, records: size, repeats: config.recoveryRepeats[i] ?? 1 }
    if (suspendable(target)) await target.suspend()
    let child: RecoveryChildResult
    try {
      child = await runChild(job)
    } finally {
      if (suspendable(target)) await target.reopen()
    }
    if (child.entries !== size) throw new Error(`The recovery child read ${child.entries} records, not ${size}.`)
    const open = timing(child.openMs)
    const bareRead = timing(child.bareReadMs)
    const growth = Math.max(0, child.peakRssBytes - child.baseRssBytes)
    rows.push({
      store: target.name,
      records: size,
      openFirstMs: round(child.openFirstMs, 3),
      open,
      bareRead,
      ratio: ratio(open.medianMs, bareRead.medianMs),
      peakRssGrowthMB: round(growth / MB, 2),
      retainedHeapMB: round(child.retainedHeapBytes / MB, 2),
      bytesPerRecordPeak: Math.round(growth / size),
      requestsPerOpen: child.requestsPerOpen,
    })
    progress(`  ${target.name}: opened ${size} records in ${round(open.medianMs, 1)} ms (bare read ${round(bareRead.medianMs, 1)} ms)`)
  }
  return rows
}

/** Time and memory from each size to the next: linear growth has factors equal to the size factor. */
export function growthOf(rows: readonly RecoveryRow[]): GrowthRow[] {
  const out: GrowthRow[] = []
  for (let i = 1; i < rows.length; i++) {
    const from = rows[i - 1]!
    const to = rows[i]!
    if (from.store !== to.store) continue
    out.push({
      store: to.store,
      from: from.records,
      to: to.records,
      timeFactor: ratio(to.open.medianMs, from.open.medianMs),
      memoryFactor: ratio(to.peakRssGrowthMB, from.peakRssGrowthMB),
      recordsFactor: to.records / from.records,
    })
  }
  return out
}

function runChild(job: RecoveryJob): Promise<RecoveryChildResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', CHILD, JSON.stringify(job)],
      { timeout: 180_000, maxBuffer: 16 * MB },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`recovery child (${job.connection.store}, ${job.records}) failed: ${stderr.trim() || error.message}`))
          return
        }
        const line = stdout.trim().split('\n').pop() ?? ''
        try {
          resolve(JSON.parse(line) as RecoveryChildResult)
        } catch {
          reject(new Error(`recovery child printed no result: ${stdout.slice(0, 500)} ${stderr.slice(0, 500)}`))
        }
      },
    )
  })
}
