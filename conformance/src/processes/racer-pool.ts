import { type ChildProcess, fork } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Clock, HarnessStore, LeaseStore, StoreLimits, WakeupStore } from '@tanstack/ai-harness/store'
import type { ProcessesOption } from '../options.js'
import { type OpenedStore, type RacerMethod, type RacerReply, type RacerRequest, receivedError } from './protocol.js'

const RACER_MAIN = fileURLToPath(new URL('./racer-main.js', import.meta.url))
type Pending = { resolve: (value: unknown) => void; reject: (error: unknown) => void; what: string }
type Outgoing = RacerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never

/** One racer: a child process or a worker thread, and the calls waiting for its replies. */
class Racer {
  readonly #pending = new Map<number, Pending>()
  #nextId = 1
  #stderr = ''
  #dead: Error | undefined
  readonly #post: (message: RacerRequest) => void
  readonly #stop: () => Promise<void>

  constructor(
    readonly label: string,
    kind: 'process' | 'thread',
    execArgv: string[],
  ) {
    const onReply = (reply: RacerReply) => {
      const pending = this.#pending.get(reply.id)
      if (!pending) return
      this.#pending.delete(reply.id)
      if ('error' in reply) pending.reject(receivedError(reply.error, `${label}, ${pending.what}`))
      else pending.resolve(reply.value)
    }
    const onExit = (code: number | null) => {
      this.#dead = new Error(
        `The racer ${label} exited (code ${code})${this.#stderr ? `: ${this.#stderr.trim().slice(-2000)}` : ''}. Check the processes module and its options.`,
      )
      for (const pending of this.#pending.values()) pending.reject(this.#dead)
      this.#pending.clear()
    }
    if (kind === 'thread') {
      const worker = new Worker(RACER_MAIN, { execArgv, stderr: true })
      worker.stderr.on('data', (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString()).slice(-10_000)
      })
      worker.on('message', onReply)
      worker.on('error', (error) => {
        this.#stderr += String(error.stack ?? error)
      })
      worker.on('exit', onExit)
      worker.unref()
      this.#post = (message) => worker.postMessage(message)
      this.#stop = async () => void (await worker.terminate())
    } else {
      const child: ChildProcess = fork(RACER_MAIN, [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
      child.stderr?.on('data', (chunk: Buffer) => {
        this.#stderr = (this.#stderr + chunk.toString()).slice(-10_000)
      })
      child.on('message', (reply) => onReply(reply as RacerReply))
      // A call sent after the racer disconnected (a case that failed with calls of its racers still going): theirs is a rejection, not an unhandled error.
      child.on('error', (error) => {
        this.#stderr += String(error.stack ?? error)
      })
      child.on('exit', onExit)
      child.unref()
      this.#post = (message) => child.send(message)
      this.#stop = async () => {
        if (child.exitCode !== null || child.signalCode !== null) return
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        child.disconnect()
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
        await exited
        clearTimeout(timer)
      }
    }
  }

  request(message: Outgoing, what: string): Promise<unknown> {
    if (this.#dead) return Promise.reject(this.#dead)
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, what })
      this.#post({ ...message, id } as RacerRequest)
    })
  }

  stop(): Promise<void> {
    return this.#stop()
  }
}

/** A store opened in a racer process, and work that racer runs with its own streams and locks on it. */
export interface RacerProcess {
  readonly store: HarnessStore
  /** TanStack AI's `resumeServerSentEventsResponse` of `runId` after `lastEventId`, run in the racer: the body as text. */
  resumeSse(runId: string, lastEventId: string): Promise<string>
  /** `sections` witnessed critical sections under the racer's own lock of `key`, all at once (see `witnessedSection`). */
  lockSections(o: { key: string; witness: string; who: string; sections: number; holdMs: number }): Promise<void>
}

/**
 * The racers of one conformance run, started at the first race case and reused by the
 * next ones (starting a process costs far more than a case). Each race writer is a store
 * opened in one of them, on the case's namespace, reached through a proxy store.
 */
export class RacerPool {
  readonly #racers: Racer[] = []
  #next = 0
  #module = ''

  constructor(
    private readonly option: ProcessesOption,
    private readonly count: number,
  ) {}

  /** Opens a store in the next racer (round robin) and returns a store that calls it. */
  async open(namespace: string, clock: Clock): Promise<HarnessStore> {
    return (await this.openProcess(namespace, clock)).store
  }

  /** Opens a store in the next racer: the store that calls it, and the stream and lock work that racer runs itself. */
  async openProcess(namespace: string, clock: Clock): Promise<RacerProcess> {
    if (this.#racers.length === 0) {
      const { module, kind, execArgv } = resolveProcesses(this.option)
      for (let i = 0; i < this.count; i++) this.#racers.push(new Racer(`${kind} racer ${i + 1}`, kind, execArgv))
      this.#module = module
    }
    const racer = this.#racers[this.#next++ % this.#racers.length]!
    const opened = (await racer.request({ op: 'open', module: this.#module, namespace, now: clock.now() }, 'createStore')) as OpenedStore
    const store = opened.store
    return {
      store: remoteStore(racer, opened, clock),
      resumeSse: (runId, lastEventId) =>
        racer.request(
          { op: 'sse-resume', store, runId, lastEventId, now: clock.now() },
          'resumeServerSentEventsResponse',
        ) as Promise<string>,
      lockSections: async (o) =>
        void (await racer.request({ op: 'lock-sections', store, ...o, now: clock.now() }, `${o.sections} critical sections of ${o.key}`)),
    }
  }

  async close(): Promise<void> {
    const racers = this.#racers.splice(0)
    await Promise.allSettled(racers.map((racer) => racer.stop()))
  }
}

/** The module as an import specifier, the racer kind and its Node options; throws a clear error for a module that cannot load. */
export function resolveProcesses(option: ProcessesOption): { module: string; kind: 'process' | 'thread'; execArgv: string[] } {
  const url = option.module instanceof URL ? option.module : pathToFileURL(option.module)
  const path = fileURLToPath(url)
  if (!existsSync(path)) {
    throw new Error(`processes.module ${path} does not exist. Pass new URL('./my-store-factory.js', import.meta.url).`)
  }
  let execArgv = option.execArgv
  const typescript = /\.[cm]?tsx?$/.test(path)
  if (typescript && option.kind === 'thread' && !execArgv) {
    throw new Error(
      `processes.module ${path} is TypeScript, and worker threads run no --import loader on Node 20: use kind: 'process' (the default), or point at compiled JavaScript.`,
    )
  }
  if (!execArgv) {
    execArgv = []
    if (typescript) {
      let loader: string
      try {
        loader = createRequire(url).resolve('tsx')
      } catch {
        throw new Error(
          `processes.module ${path} is TypeScript, and tsx cannot be found from its folder. Add tsx to that package's devDependencies, pass processes.execArgv with your own loader, or point at compiled JavaScript.`,
        )
      }
      execArgv = ['--import', pathToFileURL(loader).href]
    }
  }
  return { module: url.href, kind: option.kind ?? 'process', execArgv }
}

/** A store whose every call runs in a racer, with the suite's clock time of the moment. */
function remoteStore(racer: Racer, opened: OpenedStore, clock: Clock): HarnessStore {
  let closed = false
  const call =
    (method: RacerMethod) =>
    (...args: unknown[]): Promise<never> =>
      racer.request({ op: 'call', store: opened.store, method, args, now: clock.now() }, method) as Promise<never>
  const leases: LeaseStore = { acquire: call('leases.acquire'), renew: call('leases.renew'), release: call('leases.release') }
  const wakeups: WakeupStore = {
    schedule: call('wakeups.schedule'),
    cancel: call('wakeups.cancel'),
    due: call('wakeups.due'),
    claim: call('wakeups.claim'),
  }
  return {
    limits: opened.limits as StoreLimits,
    append: call('append'),
    read: call('read'),
    delete: call('delete'),
    leases: opened.leases ? leases : undefined,
    wakeups: opened.wakeups ? wakeups : undefined,
    sessions: opened.sessions ? { list: call('sessions.list'), waiting: call('sessions.waiting') } : undefined,
    now: opened.now ? call('now') : undefined,
    async close() {
      if (closed) return
      closed = true
      await racer.request({ op: 'close', store: opened.store }, 'close')
    },
  }
}
