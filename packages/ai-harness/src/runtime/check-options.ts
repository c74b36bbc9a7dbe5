import { HarnessError } from '../contract/errors.js'
import { isObject } from '../store/option-checks.js'

/**
 * The options checks of every public factory (`defineHarness`, `durableTool`,
 * `agentTool`, `createHost`, `createWorker`): a wrong option is refused at once with
 * `INVALID_ARGUMENT` naming the option and what it takes, instead of a `TypeError` from
 * deep inside later. Messages never echo a given string: it could be a secret.
 */

/** What one option takes. */
export interface OptionRule {
  /** What the option takes, as the message says it: "a non-empty string, e.g. { name: 'shop' }". */
  readonly accepts: string
  readonly test: (value: unknown) => boolean
  /** Required options must be present (not undefined). */
  readonly required?: boolean
}

export type OptionRules = Readonly<Record<string, OptionRule>>

/** How a value looks, for a message: its kind, and numbers and booleans themselves. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  switch (typeof value) {
    case 'number':
    case 'boolean':
      return String(value)
    case 'string':
      return value === '' ? 'an empty string' : 'a string'
    case 'undefined':
      return 'undefined'
    case 'function':
      return 'a function'
    case 'object':
      return 'an object'
    default:
      return `a ${typeof value}`
  }
}

/**
 * Checks `options` of the factory `factory` against `rules`: an object, every required
 * option present, every given option known and of the kind its rule takes.
 */
export function checkOptions(
  factory: string,
  options: unknown,
  rules: OptionRules,
  what = 'options',
): asserts options is Record<string, unknown> {
  if (!isObject(options)) {
    const required = Object.entries(rules)
      .filter(([, rule]) => rule.required)
      .map(([name]) => name)
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `${factory} takes its ${what} as an object${required.length > 0 ? ` with ${required.join(', ')}` : ''}; it got ${describeValue(options)}.`,
    )
  }
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(rules, key)) {
      throw new HarnessError(
        'INVALID_ARGUMENT',
        `${factory} has no option ${JSON.stringify(key)}; its ${what} are ${Object.keys(rules).join(', ')}.`,
      )
    }
  }
  for (const [name, rule] of Object.entries(rules)) {
    const value = options[name]
    if (value === undefined) {
      if (rule.required) throw new HarnessError('INVALID_ARGUMENT', `${factory} needs option ${JSON.stringify(name)}: ${rule.accepts}.`)
      continue
    }
    if (!rule.test(value)) {
      throw new HarnessError(
        'INVALID_ARGUMENT',
        `${factory}: option ${JSON.stringify(name)} takes ${rule.accepts}; it got ${describeValue(value)}.`,
      )
    }
  }
}

/** Checks one positional argument of a factory, e.g. the tool definition of `durableTool`. */
export function checkArgument(factory: string, name: string, value: unknown, rule: OptionRule): void {
  if (rule.test(value)) return
  throw new HarnessError('INVALID_ARGUMENT', `${factory}: the ${name} must be ${rule.accepts}; it got ${describeValue(value)}.`)
}

/** Rules that several factories share. */
export const rules = {
  nonEmptyString: (example: string, required = false): OptionRule => ({
    accepts: `a non-empty string, e.g. ${example}`,
    test: (v) => typeof v === 'string' && v !== '',
    required,
  }),
  function: (example: string, required = false): OptionRule => ({
    accepts: `a function, e.g. ${example}`,
    test: (v) => typeof v === 'function',
    required,
  }),
  object: (what: string): OptionRule => ({ accepts: what, test: isObject }),
  /** A duration or count: a finite number from min to max (integers only when `integer`). */
  number: (accepts: string, min: number, integer = false, max = Number.MAX_VALUE): OptionRule => ({
    accepts,
    test: (v) => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max && (!integer || Number.isInteger(v)),
  }),
  oneOf: <T extends string>(values: readonly T[]): OptionRule => ({
    accepts: values.map((v) => `'${v}'`).join(' or '),
    test: (v) => typeof v === 'string' && (values as readonly string[]).includes(v),
  }),
  arrayOf: (accepts: string, item: (v: unknown) => boolean): OptionRule => ({
    accepts,
    test: (v) => Array.isArray(v) && v.every(item),
  }),
  /** Any value the factory hands on as is (the check belongs to whoever reads it). */
  any: (accepts: string): OptionRule => ({ accepts, test: () => true }),
  /** A store: the log functions of `HarnessStore` and its limits. */
  store: (required = true): OptionRule => ({
    accepts: 'a HarnessStore, e.g. memoryStore() or postgresStore({ pool })',
    test: (v) =>
      isObject(v) && typeof v.append === 'function' && typeof v.read === 'function' && typeof v.delete === 'function' && isObject(v.limits),
    required,
  }),
  /** A clock: `{ now(): number }`, e.g. createManualClock() in tests. */
  clock: (): OptionRule => ({
    accepts: 'a clock { now(): number }, e.g. createManualClock() in tests',
    test: (v) => isObject(v) && typeof v.now === 'function',
  }),
} as const

export { isObject }
