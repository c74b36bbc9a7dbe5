import { type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { crashable } from '@tanstack/ai-harness/testing'
import type { Progress } from '../progress.js'
import type { CrashReport } from './crash-points.js'
import { runSession, type SessionJob, type SessionOutcome } from './run-session.js'

/** The two parts of the story in one process, on the memory store. */
export interface InProcessResult {
  crash: CrashReport | undefined
  first: SessionOutcome | undefined
  second: SessionOutcome | undefined
}

/**
 * The memory store lives in one process, so a real SIGKILL would take the log with it.
 * Here the crash is simulated: at the crash point the first run's store dies (every
 * call on it hangs forever, see `crashable`), the run is abandoned, and a second run on
 * a fresh store instance over the same data resumes the session.
 */
export async function runInProcess(job: SessionJob, data: MemoryData, progress: Progress): Promise<InProcessResult> {
  const doomed = crashable(memoryStore({ data }))
  let crashed: (report: CrashReport) => void = () => {}
  const crashPoint = new Promise<CrashReport>((resolve) => {
    crashed = resolve
  })
  const firstRun = runSession(doomed, job, progress, async (report) => {
    doomed.crash()
    crashed(report)
    return doomed.hang()
  })
  const first = await Promise.race([firstRun.then((outcome) => ({ outcome })), crashPoint.then((report) => ({ report }))])
  if ('outcome' in first) return { crash: undefined, first: first.outcome, second: undefined }
  progress(`simulated crash: ${first.report.detail}; the first run's store is dead, a fresh one resumes`)
  const second = await runSession(memoryStore({ data }), { ...job, mode: 'resume', crash: 'none' }, progress, async () => doomed.hang())
  return { crash: first.report, first: undefined, second }
}
