/**
 * A test's child process that speaks in lines: `node --import tsx <script> …args`, its
 * stderr kept for the failure messages, `ready` once it prints `ready` (rejected if it
 * exits first), and every other stdout line handed to `onLine` (a subclass sets it). The crash and workers
 * scenarios start their children this way.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..')

export type ChildExit = { code: number | null; signal: NodeJS.Signals | null }

export class LineChild {
  readonly proc: ChildProcess
  readonly ready: Promise<void>
  readonly exited: Promise<ChildExit>
  stderr = ''
  /** Every stdout line but `ready`; lines come only after the constructor returned. */
  protected onLine: (line: string) => void = () => {}

  /** `script` is a file name under `test/`; `who` names the child in the error of an early exit. */
  constructor(script: string, args: readonly string[], who: string) {
    this.proc = spawn(process.execPath, ['--import', 'tsx', join(packageDir, 'test', script), ...args], {
      cwd: packageDir,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    this.proc.stdin?.on('error', () => {}) // writing to a killed process
    this.proc.stderr?.on('data', (data: Buffer) => {
      this.stderr += data.toString()
    })
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })))
    let ready: () => void = () => {}
    const readyLine = new Promise<void>((resolve) => {
      ready = resolve
    })
    createInterface({ input: this.proc.stdout! }).on('line', (line) => (line === 'ready' ? ready() : this.onLine(line)))
    this.ready = Promise.race([
      readyLine,
      this.exited.then(({ code, signal }) => {
        throw new Error(`${who} exited before it was ready (code ${code}, signal ${signal}):\n${this.stderr}`)
      }),
    ])
    this.ready.catch(() => {})
  }
}
