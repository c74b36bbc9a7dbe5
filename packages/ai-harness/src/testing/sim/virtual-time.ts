/**
 * One virtual clock and one scheduler for a simulated world: while installed, the
 * process's `setTimeout` and `setInterval` are virtual, so every timer of every host
 * (lease renewals, store deadlines, retries, sleeps, worker polls) fires in one order
 * that depends only on the world's seed. Time moves only when nothing else can run.
 */

const realImmediate = globalThis.setImmediate
const real = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
}

interface VirtualTimer {
  readonly id: number
  at: number
  readonly seq: number
  readonly fn: () => void
  readonly every: number | undefined
  cleared: boolean
}

/** The handle a virtual timer returns, shaped like Node's `Timeout`. */
class TimerHandle {
  constructor(readonly id: number) {}
  unref(): this {
    return this
  }
  ref(): this {
    return this
  }
  hasRef(): boolean {
    return true
  }
  [Symbol.toPrimitive](): number {
    return this.id
  }
}

/** Lets the microtasks queued so far (and those they queue) run to the end. */
export function settleMicrotasks(): Promise<void> {
  return new Promise((resolve) => realImmediate(resolve))
}

export class VirtualTime {
  #now: number
  #seq = 0
  readonly #timers: VirtualTimer[] = []
  readonly #byId = new Map<number, VirtualTimer>()
  /** Real work the scheduler waits for before time moves (a store call of a store that does real I/O). */
  readonly #held = new Set<Promise<unknown>>()
  #installed = false
  /** What timer callbacks threw: in a real process, an uncaught exception. */
  readonly uncaught: unknown[] = []

  constructor(start: number) {
    this.#now = start
  }

  get now(): number {
    return this.#now
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.#timers.length
  }

  /** Calls `fn` at virtual time now + ms; returns the timer's id. */
  at(ms: number, fn: () => void, every?: number): TimerHandle {
    const timer: VirtualTimer = {
      id: ++this.#seq,
      at: this.#now + Math.max(0, Number.isFinite(ms) ? ms : 0),
      seq: this.#seq,
      fn,
      every,
      cleared: false,
    }
    this.#insert(timer)
    this.#byId.set(timer.id, timer)
    return new TimerHandle(timer.id)
  }

  clear(handle: unknown): void {
    const id = typeof handle === 'number' ? handle : handle instanceof TimerHandle ? handle.id : undefined
    const timer = id === undefined ? undefined : this.#byId.get(id)
    if (!timer) return
    timer.cleared = true
    this.#byId.delete(timer.id)
    const index = this.#timers.indexOf(timer)
    if (index >= 0) this.#timers.splice(index, 1)
  }

  /** The scheduler waits for `work` (real I/O) before it moves time on. */
  hold(work: Promise<unknown>): void {
    this.#held.add(work)
    const done = () => this.#held.delete(work)
    work.then(done, done)
  }

  /**
   * Runs one store call that may do real I/O (a database in the process): with the real
   * timers while it runs (its driver's own timers must fire), and the scheduler waits for
   * it. The virtual timers are back before anything that waits on it goes on.
   */
  real<T>(work: () => Promise<T>): Promise<T> {
    const virtual = {
      setTimeout: globalThis.setTimeout,
      clearTimeout: globalThis.clearTimeout,
      setInterval: globalThis.setInterval,
      clearInterval: globalThis.clearInterval,
    }
    Object.assign(globalThis, real)
    let running: Promise<T>
    try {
      running = work()
    } catch (error) {
      running = Promise.reject(error)
    }
    const settled = running.finally(() => Object.assign(globalThis, virtual))
    this.hold(settled)
    return settled
  }

  #insert(timer: VirtualTimer): void {
    let low = 0
    let high = this.#timers.length
    while (low < high) {
      const mid = (low + high) >> 1
      const other = this.#timers[mid]!
      if (other.at < timer.at || (other.at === timer.at && other.seq < timer.seq)) low = mid + 1
      else high = mid
    }
    this.#timers.splice(low, 0, timer)
  }

  /** Makes the process's timers virtual until the returned function is called. */
  install(): () => Promise<void> {
    if (this.#installed) throw new Error('This virtual time is installed already.')
    this.#installed = true
    const g = globalThis as Record<string, unknown>
    g.setTimeout = (fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => this.at(ms ?? 0, () => fn(...args))
    g.setInterval = (fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
      this.at(Math.max(1, ms ?? 1), () => fn(...args), Math.max(1, ms ?? 1))
    g.clearTimeout = (handle: unknown) => this.clear(handle)
    g.clearInterval = (handle: unknown) => this.clear(handle)
    return async () => {
      // What the world still had under way must not reach the next world's timers (nor real ones):
      // its timers go nowhere while its last microtasks run out, then the real timers come back.
      const sink = () => new TimerHandle(0)
      Object.assign(globalThis, { setTimeout: sink, setInterval: sink, clearTimeout: () => {}, clearInterval: () => {} })
      this.#timers.length = 0
      for (let i = 0; i < 4; i++) await settleMicrotasks()
      Object.assign(globalThis, real)
      this.#installed = false
    }
  }

  /** Runs what can run now: held real work, then the microtasks it releases, until nothing moves. */
  async #settle(): Promise<void> {
    do {
      while (this.#held.size > 0) await Promise.allSettled([...this.#held])
      await settleMicrotasks()
      await settleMicrotasks()
    } while (this.#held.size > 0)
  }

  /**
   * Runs the world: fires timers in time order, letting everything settle after each,
   * until `done()` holds after a settle, no timer is left, or the time passes `until`.
   */
  async run(until: number, done: () => boolean = () => false): Promise<void> {
    await this.#settle()
    while (!done()) {
      const next = this.#timers[0]
      if (!next || next.at > until) {
        this.#now = Math.max(this.#now, until)
        return
      }
      this.#timers.shift()
      this.#now = Math.max(this.#now, next.at)
      if (next.every !== undefined) {
        next.at = this.#now + next.every
        this.#insert(next)
      } else {
        this.#byId.delete(next.id)
      }
      try {
        next.fn()
      } catch (error) {
        this.uncaught.push(error)
      }
      await this.#settle()
    }
  }
}
