import { execFile } from 'node:child_process'

export interface ChildRun {
  readonly stdout: string
  readonly ms: number
}

/**
 * Runs a runtime to its end, killed after `timeoutMs`; rejects with its output when it
 * fails, so a broken runtime shows what it printed. Measures the wall time, start of
 * the process included.
 */
export function runChild(command: string, args: readonly string[], options: { cwd: string; timeoutMs: number }): Promise<ChildRun> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, NO_COLOR: '1' },
      },
      (error, stdout, stderr) => {
        const ms = Math.round(performance.now() - started)
        if (!error) return resolve({ stdout, ms })
        const why = error.killed ? `was killed after ${options.timeoutMs} ms` : `exited with ${error.code ?? error.signal}`
        reject(new Error(`${command} ${args.join(' ')} ${why}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`.slice(-12_000)))
      },
    )
  })
}

/** The last line of a run's output that is a JSON object: the report. */
export function reportOf(stdout: string): Record<string, unknown> {
  const line = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'))
    .at(-1)
  if (!line) throw new Error(`the run printed no report:\n${stdout}`)
  return JSON.parse(line) as Record<string, unknown>
}
