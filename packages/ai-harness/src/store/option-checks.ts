/**
 * The checks every store factory runs on its options, so every store refuses the same
 * inputs in the same words: `INVALID_ARGUMENT`, "<factory>: option <name> must be <what it
 * takes>, not <what it got>." A store adds only the checks of its own options (a bucket,
 * a table name, a client of its database) and says them through `invalid` too.
 */
import { HarnessError } from '../contract/errors.js'
import type { StoreLimits } from '../contract/types.js'

/** The longest delay `setTimeout` keeps (2^31 - 1 ms); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1

const LIMIT_NAMES: readonly string[] = ['maxRecordBytes', 'maxBatchBytes', 'maxBatchRecords', 'maxLogIdBytes'] satisfies Array<
  keyof StoreLimits
>

/** Whether `value` is an object and not an array: what an options object, or an option made of options, is. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * How a message shows a value it refuses: its keys for an object (never its values, which
 * may hold credentials), the first 40 characters of a string, numbers and booleans themselves.
 */
function shown(value: unknown): string {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return 'an array'
  switch (typeof value) {
    case 'object':
      return `an object (${Object.keys(value).slice(0, 5).join(', ') || 'no keys'})`
    case 'string':
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
    case 'function':
      return 'a function'
    case 'number':
    case 'boolean':
      return String(value)
    default:
      return `a ${typeof value}`
  }
}

/** What an AWS SDK v3 store says its `client` and `clientConfig` options take. */
export interface ClientKinds {
  /** e.g. `'an S3Client from @aws-sdk/client-s3'` */
  readonly client: string
  /** e.g. `'an S3ClientConfig object'` */
  readonly clientConfig: string
}

/**
 * The option checks of one store factory, made by {@link optionChecks}. Each throws
 * `HarnessError('INVALID_ARGUMENT')` naming the factory, the option and what it takes;
 * `undefined` (an option left out) passes every check of one option.
 */
export interface OptionChecks {
  /** Throws `INVALID_ARGUMENT` with "<factory>: <message>", for a store's own rule. */
  refuse(message: string): never
  /** Throws "<factory>: option <name> must be <accepts>, not <value as shown>." */
  invalid(name: string, accepts: string, value: unknown): never
  /**
   * The options themselves: an object (`example` shows one, e.g. `"{ bucket: 'my-app' }"`),
   * returned as a record; with `optional`, `undefined` too, returned as `{}`.
   */
  object(options: unknown, example: string, optional?: boolean): Record<string, unknown>
  /**
   * Refuses a key of `given` that is not in `known`: a typo would otherwise fall back to a
   * default in silence. `group` names the option `given` is (`'limits'`); none for the options.
   */
  knownKeys(given: Record<string, unknown>, known: readonly string[], group?: string): void
  /** `clock`: an object with `now()`, as `Clock`. */
  clock(value: unknown): void
  /**
   * `limits`: an object of `maxRecordBytes`, `maxBatchBytes`, `maxBatchRecords`,
   * `maxLogIdBytes`, each a whole number >= 1 (or undefined). The store checks its own
   * upper bounds after it.
   */
  limits(value: unknown): Partial<StoreLimits> | undefined
  /** A count such as `readConcurrency`: a whole number >= 1. */
  positiveInteger(name: string, value: unknown): number | undefined
  /** A deadline such as `timeoutMs`: ms above 0 and at most {@link MAX_TIMER_MS}, so a timer can keep it. */
  timeoutMs(name: string, value: unknown): number | undefined
  /**
   * An AWS SDK v3 store's `client` (an object with `send()`) or `clientConfig` (an object
   * for a client the store creates), not both; `kinds` says what each takes.
   */
  clientOrConfig(client: unknown, clientConfig: unknown, kinds: ClientKinds): void
}

/**
 * The option checks of the store factory `factory` (e.g. `'s3Store'`), the same on every
 * store: call them on the options before anything else, so a wrong one is
 * `INVALID_ARGUMENT` naming it rather than a `TypeError` from deep inside later.
 *
 * ```ts
 * const checks = optionChecks('myStore')
 * const given = checks.object(options, '{ url }')
 * checks.knownKeys(given, ['url', 'clock', 'limits'])
 * checks.clock(given.clock)
 * const limits = checks.limits(given.limits)
 * ```
 */
export function optionChecks(factory: string): OptionChecks {
  const refuse = (message: string): never => {
    throw new HarnessError('INVALID_ARGUMENT', `${factory}: ${message}`)
  }
  const invalid = (name: string, accepts: string, value: unknown): never =>
    refuse(`option ${name} must be ${accepts}, not ${shown(value)}.`)
  const knownKeys = (given: Record<string, unknown>, known: readonly string[], group?: string): void => {
    for (const key of Object.keys(given)) {
      if (known.includes(key)) continue
      refuse(`unknown option ${JSON.stringify(key)}${group ? ` in ${group}; ${group} takes` : '; its options are'} ${known.join(', ')}.`)
    }
  }
  const positiveInteger = (name: string, value: unknown): number | undefined => {
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= 1)) invalid(name, 'a positive integer', value)
    return value as number | undefined
  }
  return {
    refuse,
    invalid,
    knownKeys,
    positiveInteger,
    object(options, example, optional = false) {
      if (optional && options === undefined) return {}
      if (isObject(options)) return options
      throw new HarnessError(
        'INVALID_ARGUMENT',
        `${factory} takes an options object such as ${example}${optional ? ', or nothing' : ''}, not ${shown(options)}.`,
      )
    },
    clock(value) {
      if (value !== undefined && !(isObject(value) && typeof value.now === 'function')) {
        invalid('clock', 'an object with a now() method returning ms since the epoch, such as createManualClock()', value)
      }
    },
    limits(value) {
      if (value === undefined) return undefined
      if (!isObject(value)) invalid('limits', 'an object such as { maxRecordBytes: 65536 }', value)
      const given = value as Record<string, unknown>
      knownKeys(given, LIMIT_NAMES, 'limits')
      for (const name of LIMIT_NAMES) positiveInteger(`limits.${name}`, given[name])
      return given as Partial<StoreLimits>
    },
    timeoutMs(name, value) {
      if (value !== undefined && !(typeof value === 'number' && value > 0 && value <= MAX_TIMER_MS)) {
        invalid(name, `a number of ms above 0 and at most ${MAX_TIMER_MS}`, value)
      }
      return value as number | undefined
    },
    clientOrConfig(client, clientConfig, kinds) {
      if (client !== undefined && !(isObject(client) && typeof client.send === 'function')) invalid('client', kinds.client, client)
      if (clientConfig !== undefined && !isObject(clientConfig)) invalid('clientConfig', kinds.clientConfig, clientConfig)
      if (client !== undefined && clientConfig !== undefined) {
        refuse('pass client (yours) or clientConfig (for a client the store creates), not both.')
      }
    },
  }
}
