/**
 * Waiting in the process: waits that a stopped run cuts short, and the deadline of a
 * tool call. Durable waits (a logged wake time, a park) are the steps' business.
 */

import { MAX_TIMER_MS } from '../store/option-checks.js'

/** A timer as `setTimeout` and `setInterval` return it: an object on Node, Bun and workerd (there without `unref`), a number on Deno. */
export type Timer = ReturnType<typeof setTimeout>

/**
 * Lets the process exit while only `timer` is left waiting, where the runtime has such a
 * thing: `unref()` on Node and Bun, `Deno.unrefTimer` for Deno's numeric timers. workerd
 * has none (a request ends on its own), so nothing is assumed.
 */
export function unrefTimer(timer: Timer): void {
  const deno = (globalThis as { Deno?: { unrefTimer?: (id: number) => void } }).Deno
  if (typeof timer === 'number') deno?.unrefTimer?.(timer)
  else (timer as { unref?: () => void }).unref?.()
}

/**
 * Waits `ms` in the process, in timer-sized pieces so a wait of weeks is not cut to
 * nothing; rejects with `stopped()` as soon as `signal` aborts.
 */
export async function waitFor(ms: number, signal: AbortSignal, stopped: () => unknown): Promise<void> {
  let left = ms
  while (left > 0) {
    const piece = Math.min(left, MAX_TIMER_MS)
    await new Promise<void>((resolve, reject) => {
      if (signal.aborted) {
        reject(stopped())
        return
      }
      const onAbort = () => {
        clearTimeout(timer)
        reject(stopped())
      }
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }, piece)
      signal.addEventListener('abort', onAbort, { once: true })
    })
    left -= piece
  }
}

/** The time limit of one run of a tool call: its signal, and the race of the call against it. */
export interface Deadline {
  /** Aborts when the run's signal does, or when the time is up (then with the timeout error). */
  readonly signal: AbortSignal
  /** True once the time is up. */
  readonly expired: boolean
  /** Settles as `work` does, or rejects with the timeout error when the time is up first. */
  race<T>(work: Promise<T>): Promise<T>
  /** Stops the timer. */
  clear(): void
}

/**
 * A deadline of `timeoutMs` over `parent` (none when `timeoutMs` is undefined: the signal
 * is `parent`, and `race` waits for the work). The work keeps running after the deadline
 * unless it honours the signal; whatever it does later is not awaited.
 */
export function deadline(parent: AbortSignal, timeoutMs: number | undefined, timedOut: () => Error): Deadline {
  if (timeoutMs === undefined) {
    return { signal: parent, expired: false, race: (work) => work, clear: () => {} }
  }
  const controller = new AbortController()
  const onParent = () => controller.abort(parent.reason)
  if (parent.aborted) onParent()
  else parent.addEventListener('abort', onParent, { once: true })
  let expired = false
  let fire: (error: Error) => void = () => {}
  const expiry = new Promise<never>((_, reject) => {
    fire = reject
  })
  expiry.catch(() => {})
  const timer = setTimeout(() => {
    expired = true
    const error = timedOut()
    controller.abort(error)
    fire(error)
  }, timeoutMs)
  return {
    signal: controller.signal,
    get expired() {
      return expired
    },
    race(work) {
      // The work may fail after the deadline: nobody waits for it then.
      work.catch(() => {})
      return Promise.race([work, expiry])
    },
    clear() {
      clearTimeout(timer)
      parent.removeEventListener('abort', onParent)
    },
  }
}
