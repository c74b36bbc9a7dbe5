/**
 * The PostgreSQL tools as child processes, run as the server's OS user, with every way a
 * child can end (spawn error, exit, signal, time out) turned into a value: nothing here
 * leaves an `'error'` event unhandled.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import type { ServerUser } from './server-user.js'

export interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  /** The spawn itself failed (`EACCES`, `ENOENT`): the program never ran. */
  spawnError?: NodeJS.ErrnoException
  timedOut: boolean
  output: string
}

export interface ToolOptions {
  user: ServerUser
  cwd: string
  timeoutMs: number
}

/** English messages whatever the user's locale: the ready line is matched by its words. */
const ENV = { ...process.env, LC_ALL: 'C', LANG: 'C', LC_MESSAGES: 'C' }

export function launch(file: string, args: string[], { user, cwd }: Omit<ToolOptions, 'timeoutMs'>): ChildProcess {
  return spawn(file, args, { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'], ...(user ? { uid: user.uid, gid: user.gid } : {}) })
}

/**
 * Collects a child's output, and settles once when it ends, or when its time is up (then it
 * is killed). `onOutput` sees the output as it comes; once it returns true (the caller has
 * what it waited for) the child may run on past the bound.
 */
export function whenEnded(child: ChildProcess, timeoutMs: number, onOutput?: (text: string) => boolean): Promise<Ended> {
  return new Promise((resolve) => {
    let output = ''
    const keep = (chunk: Buffer) => {
      const text = chunk.toString('utf8')
      output = (output + text).slice(-16_000)
      if (onOutput?.(text)) clearTimeout(timer)
    }
    child.stdout?.on('data', keep)
    child.stderr?.on('data', keep)
    let settled = false
    const settle = (ended: Omit<Ended, 'output'>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ ...ended, output })
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      settle({ code: null, signal: 'SIGKILL', timedOut: true })
    }, timeoutMs)
    timer.unref()
    child.once('error', (spawnError: NodeJS.ErrnoException) => settle({ code: null, signal: null, spawnError, timedOut: false }))
    child.once('close', (code, signal) => settle({ code, signal, timedOut: false }))
  })
}

/** Runs a tool to its end. */
export function runTool(file: string, args: string[], options: ToolOptions): Promise<Ended> {
  return whenEnded(launch(file, args, options), options.timeoutMs)
}

/** Stops a server (fast shutdown), and kills it when it has not gone within the bound. */
export async function stopChild(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise<void>((resolve) => child.once('close', () => resolve()))
  child.kill('SIGINT')
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  await gone
  clearTimeout(timer)
}
