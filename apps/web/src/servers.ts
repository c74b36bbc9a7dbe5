import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Backend } from './proxy.js'

// From src/ (the tests) and from dist/ (the built launcher) alike: the built server process.
const MAIN = fileURLToPath(new URL('../dist/server/main.js', import.meta.url))
/** How soon a server that died is started again, as a process manager would. */
const RESTART_MS = 300

/** A server process the app keeps running: restarted when it dies, until the app stops. */
export class ServerProcess implements Backend {
  port: number | undefined
  pid: number | undefined
  #child: ChildProcess | undefined
  #stopping = false
  #ready: Promise<void> = Promise.resolve()

  constructor(
    readonly name: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: (line: string) => void,
  ) {}

  /** Starts the process; resolves once it takes requests. */
  start(): Promise<void> {
    const child = spawn(process.execPath, ['--enable-source-maps', MAIN], {
      env: { ...this.env, WEB_SERVER: this.name, WEB_PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    this.#child = child
    this.pid = child.pid
    this.#ready = new Promise((resolve, reject) => {
      child.stdout!.setEncoding('utf8').on('data', (text: string) => {
        const port = /listening (\d+)/.exec(text)?.[1]
        if (!port) return
        this.port = Number(port)
        this.log(`server ${this.name} (pid ${child.pid}) listens on port ${port}`)
        resolve()
      })
      child.once('exit', (code, signal) => {
        this.port = undefined
        reject(new Error(`server ${this.name} exited before it listened (${signal ?? code})`))
        if (this.#stopping) return
        this.log(`server ${this.name} (pid ${child.pid}) died (${signal ?? `exit ${code}`}); starting it again`)
        setTimeout(() => {
          // Stopped in the meantime: no process may outlive the app.
          if (!this.#stopping) void this.start().catch((error: Error) => this.#stopping || this.log(error.message))
        }, RESTART_MS)
      })
    })
    // A restart nobody awaits must not end the app with an unhandled rejection.
    this.#ready.catch(() => {})
    return this.#ready
  }

  /** Resolves once the process (or the one that replaced it after a crash) takes requests; 20 s at most. */
  async ready(): Promise<void> {
    const until = Date.now() + 20_000
    while (this.port === undefined) {
      if (this.#stopping || Date.now() > until) throw new Error(`server ${this.name} is not running`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /** Stops for good: SIGTERM (the server hands its turns off), SIGKILL after 5 s. */
  async stop(): Promise<void> {
    this.#stopping = true
    const child = this.#child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await exited
    clearTimeout(timer)
  }
}
