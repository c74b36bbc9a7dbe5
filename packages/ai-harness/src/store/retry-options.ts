import type { RetryOptions } from '../contract/retry.js'
import { type OptionChecks, optionChecks } from './option-checks.js'

/**
 * A store's `retry` option, the same on every store: `withRetry`'s options, each optional;
 * `isTransient` defaults to the store's own classifier.
 */
export type StoreRetryOptions = Partial<RetryOptions>

const NUMBERS = ['retries', 'baseMs', 'maxMs'] as const
const FUNCTIONS = ['isTransient', 'sleep', 'random', 'onRetry'] as const
const KNOWN: readonly string[] = [...NUMBERS, ...FUNCTIONS]

/**
 * Throws `INVALID_ARGUMENT` when a store's `retry` option is not {@link StoreRetryOptions};
 * `where` names the store, e.g. `'postgresStore'`. `undefined` (no option) passes.
 */
export function checkRetryOptions(where: string, retry: unknown): asserts retry is StoreRetryOptions | undefined {
  if (retry === undefined) return
  const checks: OptionChecks = optionChecks(where)
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) {
    checks.invalid('retry', 'an object such as { retries: 3, baseMs: 50 }', retry)
  }
  const given = retry as Record<string, unknown>
  checks.knownKeys(given, KNOWN, 'retry')
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) continue
    if ((NUMBERS as readonly string[]).includes(name)) {
      const whole = name === 'retries'
      if (typeof value !== 'number' || value < 0 || (whole ? !Number.isSafeInteger(value) : !Number.isFinite(value))) {
        checks.invalid(`retry.${name}`, `a ${whole ? 'whole number' : 'finite number of ms'} >= 0`, value)
      }
    } else if (typeof value !== 'function') {
      checks.invalid(`retry.${name}`, 'a function', value)
    }
  }
}
