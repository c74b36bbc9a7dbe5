import { HarnessError } from '../contract/errors.js'
import type { RetryOptions } from '../contract/retry.js'

/**
 * A store's `retry` option, the same on every store: `withRetry`'s options, each optional;
 * `isTransient` defaults to the store's own classifier.
 */
export type StoreRetryOptions = Partial<RetryOptions>

const NUMBERS = ['retries', 'baseMs', 'maxMs'] as const
const FUNCTIONS = ['isTransient', 'sleep', 'random', 'onRetry'] as const
const KNOWN: readonly string[] = [...NUMBERS, ...FUNCTIONS]

const shown = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? 'an array' : String(value))

/**
 * Throws `INVALID_ARGUMENT` when a store's `retry` option is not {@link StoreRetryOptions};
 * `where` names the store, e.g. `'postgresStore'`. `undefined` (no option) passes.
 */
export function checkRetryOptions(where: string, retry: unknown): asserts retry is StoreRetryOptions | undefined {
  if (retry === undefined) return
  const refuse = (message: string): never => {
    throw new HarnessError('INVALID_ARGUMENT', `${where}: ${message}`)
  }
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) {
    refuse(`option retry must be an object such as { retries: 3, baseMs: 50 }, not ${shown(retry)}.`)
  }
  for (const [name, value] of Object.entries(retry as object)) {
    if (!KNOWN.includes(name)) refuse(`retry: unknown option ${JSON.stringify(name)}; the retry options are ${KNOWN.join(', ')}.`)
    if (value === undefined) continue
    if ((NUMBERS as readonly string[]).includes(name)) {
      const whole = name === 'retries'
      if (typeof value !== 'number' || value < 0 || (whole ? !Number.isSafeInteger(value) : !Number.isFinite(value))) {
        refuse(`option retry.${name} must be a ${whole ? 'whole number' : 'finite number of ms'} >= 0, not ${shown(value)}.`)
      }
    } else if (typeof value !== 'function') {
      refuse(`option retry.${name} must be a function, not ${shown(value)}.`)
    }
  }
}
