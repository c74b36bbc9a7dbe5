import { isHarnessError } from './errors.js'

export interface RetryOptions {
  /** True for errors worth another try: throttling, 5xx, lost connections. */
  isTransient: (error: unknown) => boolean
  /** Tries after the first. Default {@link DEFAULT_RETRIES} (5). */
  retries?: number
  /** First backoff in ms. Default 20. */
  baseMs?: number
  /** Largest backoff in ms. Default 2000. */
  maxMs?: number
  /** Injected for tests. */
  sleep?: (ms: number) => Promise<void>
  random?: () => number
  /** Called before each new try, e.g. to log. */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void
}

/** Tries after the first when `retries` is not given. */
export const DEFAULT_RETRIES = 5

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Runs `fn`, retrying transient failures with exponential backoff and full jitter.
 * Harness errors (a `LOG_CONFLICT` above all) are never retried: a conflict means
 * the caller must read again and decide, not write again.
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const retries = options.retries ?? DEFAULT_RETRIES
  const base = options.baseMs ?? 20
  const max = options.maxMs ?? 2000
  const sleep = options.sleep ?? defaultSleep
  const random = options.random ?? Math.random
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (error) {
      if (attempt >= retries || isHarnessError(error) || !options.isTransient(error)) throw error
      const delay = Math.floor(random() * Math.min(max, base * 2 ** attempt))
      options.onRetry?.(error, attempt + 1, delay)
      await sleep(delay)
    }
  }
}
