import { CliError, ExitCode, messageOf } from '../exit-codes.js'
import { stderrProgress } from '../progress.js'
import { openStore } from '../store/open-store.js'
import type { ChildJob, ChildMessage } from './child-protocol.js'
import { runSession } from './run-session.js'

/**
 * The child side: runs one part of the story in this process and reports to the parent
 * over IPC. At the crash point it reports and then waits, so the parent's SIGKILL lands
 * exactly between the two side effects.
 */
export async function childMain(jobText: string): Promise<number> {
  if (!process.send) throw new CliError(ExitCode.Usage, 'This command is internal: the checkout run starts it as a child process.')
  // If the parent goes away, nobody will kill us at the crash point: stop instead of waiting forever.
  process.on('disconnect', () => process.exit(ExitCode.Failed))
  const job = JSON.parse(jobText) as ChildJob
  const progress = stderrProgress(`  [pid ${process.pid}] `)
  try {
    const opened = await openStore(job.store)
    const outcome = await runSession(opened.store, job, progress, async (report) => {
      progress(`crash point reached (${report.detail}); waiting for the parent to kill this process`)
      await send({ type: 'crash-point', report })
      // Keep the event loop alive: a pending promise alone would let Node exit on its own.
      setInterval(() => {}, 60_000)
      return new Promise<never>(() => {})
    })
    await opened.close()
    await send({ type: 'done', outcome })
    return ExitCode.Ok
  } catch (error) {
    const exitCode = error instanceof CliError ? error.exitCode : ExitCode.Failed
    await send({ type: 'error', message: messageOf(error), exitCode }).catch(() => {})
    return exitCode
  }
}

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    process.send!(message, undefined, {}, (error) => (error ? reject(error) : resolve()))
  })
}
