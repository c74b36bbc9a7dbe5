/**
 * The options of `postgresStore()`, their defaults, and the check that refuses a wrong
 * one with `INVALID_ARGUMENT` naming the option and what it accepts, before anything
 * deeper could fail with a TypeError.
 */
import {
  type Clock,
  checkRetryOptions,
  DEFAULT_STORE_LIMITS,
  HarnessError,
  type StoreLimits,
  type StoreRetryOptions,
} from '@tanstack/ai-harness/store'
import type { PostgresClient } from './driver-types.js'

/**
 * Longest log id the tables keep: ids are `text` in b-tree primary keys and indexes,
 * whose entries PostgreSQL caps at about 2 700 bytes (a third of a page); 2 048 bytes of
 * any text fit with room to spare.
 */
export const POSTGRES_MAX_LOG_ID_BYTES = 2048

/**
 * The limits this store declares. A record is one `text` value and a batch one
 * statement parameter, so PostgreSQL itself would take far more; these keep one
 * append to one modest round trip, and match the memory store's defaults.
 */
export const POSTGRES_DEFAULT_LIMITS: StoreLimits = { ...DEFAULT_STORE_LIMITS, maxLogIdBytes: POSTGRES_MAX_LOG_ID_BYTES }

/** Default deadline of one network wait on pg: a connection check-out or one statement. */
export const POSTGRES_DEFAULT_TIMEOUT_MS = 10_000

export interface PostgresStoreOptions {
  /**
   * A `pg` Pool (recommended on a server), a connected `pg` Client, or a PGlite
   * instance. The store does not end it unless `closeClient` is set.
   */
  client: PostgresClient
  /** Schema of the tables; created by `migrate()` when missing. Default `'public'`. */
  schema?: string
  /** Prefix of every table name, so several stores can share a schema. Default `'harness_'`. */
  tablePrefix?: string
  /**
   * Time for leases and wakeups, for tests (a manual clock). Default: the database
   * server's clock (`statement_timestamp()`), read in the same statement that compares,
   * so no host's clock matters; `store.now()` reads it too.
   */
  clock?: Clock
  /** Override the declared limits (see `POSTGRES_DEFAULT_LIMITS`). */
  limits?: Partial<StoreLimits>
  /** Backoff for transient errors. `isTransient` defaults to `isTransientPostgresError`. */
  retry?: StoreRetryOptions
  /**
   * Deadline in ms of each network wait on `pg`: checking out a connection, and each
   * statement. Past it the call fails as a transient error (the connection is dropped)
   * and is retried per `retry`; when retries run out, `STORE_UNAVAILABLE`. Default
   * 10 000. Not used on PGlite, which runs in the process.
   */
  timeoutMs?: number
  /** End the pool/client or close PGlite on `close()`. Default false: the app owns its client. */
  closeClient?: boolean
}

const OPTION_NAMES = ['client', 'schema', 'tablePrefix', 'clock', 'limits', 'retry', 'timeoutMs', 'closeClient'] as const
const LIMIT_NAMES = ['maxRecordBytes', 'maxBatchBytes', 'maxBatchRecords', 'maxLogIdBytes'] as const
/** setTimeout fires at once for a delay over 2^31 - 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1

const refuse = (message: string): never => {
  throw new HarnessError('INVALID_ARGUMENT', `postgresStore: ${message}`)
}
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const show = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : Array.isArray(value) ? 'an array' : String(value))

function checkClient(client: unknown): void {
  const has = (name: string) => isObject(client) && typeof client[name] === 'function'
  const pglite = has('query') && has('transaction')
  const pool = has('connect') && typeof (client as { totalCount?: unknown } | undefined)?.totalCount === 'number'
  const pgClient = has('query') && has('end')
  if (!(pglite || pool || pgClient)) {
    refuse(
      `options.client must be a pg Pool, a connected pg Client or a PGlite instance, not ${show(client)}. ` +
        'For example postgresStore({ client: new pg.Pool(...) }) or postgresStore({ client: new PGlite() }).',
    )
  }
}

function checkLimits(limits: unknown): void {
  if (limits === undefined) return
  if (!isObject(limits)) refuse(`options.limits must be an object such as { maxRecordBytes: 65536 }, not ${show(limits)}.`)
  for (const [name, value] of Object.entries(limits as object)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name))
      refuse(`options.limits.${name} is not a limit; the limits are ${LIMIT_NAMES.join(', ')}.`)
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      refuse(`options.limits.${name} must be a whole number >= 1, not ${show(value)}.`)
    }
  }
  const idBytes = (limits as Partial<StoreLimits>).maxLogIdBytes
  if (idBytes !== undefined && idBytes > POSTGRES_MAX_LOG_ID_BYTES) {
    refuse(
      `options.limits.maxLogIdBytes can be at most ${POSTGRES_MAX_LOG_ID_BYTES}, the longest id the tables' indexes keep, not ${idBytes}.`,
    )
  }
}

/** Throws `INVALID_ARGUMENT` for the first option that is not what `postgresStore` takes. */
export function checkOptions(options: unknown): asserts options is PostgresStoreOptions {
  if (!isObject(options)) refuse(`takes an options object such as { client: pool }, not ${show(options)}.`)
  const given = options as Record<string, unknown>
  for (const name of Object.keys(given)) {
    if (!(OPTION_NAMES as readonly string[]).includes(name)) {
      refuse(
        `it takes no option "${name}"; its options are ${OPTION_NAMES.join(', ')}.` +
          (name === 'pglite' || name === 'pool'
            ? ` Pass the ${name === 'pglite' ? 'PGlite instance' : 'pool'} as client: postgresStore({ client }).`
            : ''),
      )
    }
  }
  checkClient(given.client)
  for (const name of ['schema', 'tablePrefix'] as const) {
    if (given[name] !== undefined && typeof given[name] !== 'string') refuse(`options.${name} must be a string, not ${show(given[name])}.`)
  }
  if (given.clock !== undefined && !(isObject(given.clock) && typeof given.clock.now === 'function')) {
    refuse(`options.clock must be an object with a now() method returning ms since the epoch, not ${show(given.clock)}.`)
  }
  checkLimits(given.limits)
  checkRetryOptions('postgresStore', given.retry)
  const timeout = given.timeoutMs
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_TIMER_MS)) {
    refuse(`options.timeoutMs must be a number of ms > 0 and at most ${MAX_TIMER_MS}, not ${show(timeout)}.`)
  }
  if (given.closeClient !== undefined && typeof given.closeClient !== 'boolean') {
    refuse(`options.closeClient must be true or false, not ${show(given.closeClient)}.`)
  }
}
