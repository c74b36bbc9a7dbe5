import { Worker } from 'node:worker_threads'

// Runs in a worker thread: RSS is per process, so the worker sees the main thread's
// memory even while the main thread is busy in synchronous code (the log fold).
const SAMPLER = `
const { workerData } = require('node:worker_threads')
const control = new Int32Array(workerData, 0, 2) // [reset requested, stop requested]
const peak = new Float64Array(workerData, 8, 1)
let max = 0
while (Atomics.load(control, 1) === 0) {
  if (Atomics.load(control, 0) === 1) {
    max = 0
    Atomics.store(control, 0, 0)
    Atomics.notify(control, 0)
  }
  const rss = process.memoryUsage.rss()
  if (rss > max) { max = rss; peak[0] = max }
  Atomics.wait(control, 1, 0, 1)
}
`

/**
 * The peak RSS of this process over a window, sampled every millisecond from a worker
 * thread. `process.resourceUsage().maxRSS` would include every earlier peak (writing
 * the log, starting PGlite); this measures only the window.
 */
export class RssSampler {
  readonly #shared = new SharedArrayBuffer(16)
  readonly #control = new Int32Array(this.#shared, 0, 2)
  readonly #peak = new Float64Array(this.#shared, 8, 1)
  readonly #worker = new Worker(SAMPLER, { eval: true, workerData: this.#shared })

  /** Starts a new window; resolves once the sampler has forgotten the old peak. */
  async reset(): Promise<void> {
    Atomics.store(this.#control, 0, 1)
    for (let i = 0; i < 1000 && Atomics.load(this.#control, 0) === 1; i++) await new Promise((resolve) => setTimeout(resolve, 1))
    if (Atomics.load(this.#control, 0) === 1) throw new Error('The RSS sampler thread did not answer.')
  }

  /** The highest RSS seen since `reset`, after letting the sampler take one more look. */
  async peak(): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 3))
    return Math.max(this.#peak[0]!, process.memoryUsage.rss())
  }

  async stop(): Promise<void> {
    Atomics.store(this.#control, 1, 1)
    Atomics.notify(this.#control, 1)
    await this.#worker.terminate()
  }
}
