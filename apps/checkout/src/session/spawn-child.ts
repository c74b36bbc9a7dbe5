import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { CliError, ExitCode } from '../exit-codes.js'
import type { CrashReport } from './crash-points.js'
import { CHILD_COMMAND, type ChildJob, isChildMessage } from './child-protocol.js'
import type { SessionOutcome } from './run-session.js'

/** How a child ended: it finished its part, or the parent killed it at its crash point. */
export type ChildResult =
  | { kind: 'done'; pid: number; outcome: SessionOutcome }
  | { kind: 'killed'; pid: number; signal: NodeJS.Signals; report: CrashReport }

/** The built CLI next to this file's folder: children run the same program. */
const CLI_PATH = fileURLToPath(new URL('../cli.js', import.meta.url))

/**
 * Runs a job in a child process. When the child reports its crash point, it is killed
 * with SIGKILL at once (no cleanup, no flush, as a crash or an OOM kill); the result
 * says so once the OS has reaped it.
 */
export function runChild(job: ChildJob, onStart: (pid: number) => void): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    // The child's stdout goes to our stderr: our stdout is reserved for the summary or --json.
    const child = fork(CLI_PATH, [CHILD_COMMAND, JSON.stringify(job)], { stdio: ['ignore', 2, 'inherit', 'ipc'], execArgv: [] })
    const pid = child.pid ?? -1
    onStart(pid)
    let crash: CrashReport | undefined
    let outcome: SessionOutcome | undefined
    let failure: { message: string; exitCode: number } | undefined
    child.on('message', (message) => {
      if (!isChildMessage(message)) return
      if (message.type === 'crash-point') {
        crash = message.report
        child.kill('SIGKILL')
      } else if (message.type === 'done') outcome = message.outcome
      else failure = message
    })
    child.on('error', (error) => reject(new CliError(ExitCode.Failed, `Could not start a child process: ${error.message}`)))
    child.on('exit', (code, signal) => {
      if (crash && signal === 'SIGKILL') resolve({ kind: 'killed', pid, signal, report: crash })
      else if (failure) reject(new CliError(failure.exitCode as ExitCode, failure.message))
      else if (outcome && code === 0) resolve({ kind: 'done', pid, outcome })
      else
        reject(
          new CliError(ExitCode.Failed, `Child process ${pid} ended unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`}).`),
        )
    })
  })
}
