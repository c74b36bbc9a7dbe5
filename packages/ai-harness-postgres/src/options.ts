/**
 * The options of `postgresStore()`, their defaults, and the check that refuses a wrong
 * one with `INVALID_ARGUMENT` naming the option and what it accepts, before anything
 * deeper could fail with a TypeError.
 */
import {
  type Clock,
  checkRetryOptions,
  DEFAULT_STORE_LIMITS,
  isObject,
  type OptionChecks,
  optionChecks,
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
  /**
   * Whether this instance proves to the others that it is alive, so that when it dies its
   * sessions are taken over at once instead of at lease expiry. Default true. On `pg` it
   * keeps one connection per pool (outside it, shared by the store objects on that pool)
   * with an advisory lock on it; on a file-backed PGlite it holds the data folder for the
   * life of the store (a second process gets `STORE_LOCKED`). Set false to open no extra
   * connection (behind a pooler in transaction mode, where a session-level lock would not
   * stay with this process) or to share a PGlite across browser tabs; its leases then end
   * by expiry or release only.
   */
  liveness?: boolean
}

const OPTION_NAMES = ['client', 'schema', 'tablePrefix', 'clock', 'limits', 'retry', 'timeoutMs', 'closeClient', 'liveness'] as const
const checks: OptionChecks = optionChecks('postgresStore')

function checkClient(client: unknown): void {
  const has = (name: string) => isObject(client) && typeof client[name] === 'function'
  const pglite = has('query') && has('transaction')
  const pool = has('connect') && typeof (client as { totalCount?: unknown } | undefined)?.totalCount === 'number'
  const pgClient = has('query') && has('end')
  if (!(pglite || pool || pgClient)) {
    checks.invalid(
      'client',
      'a pg Pool, a connected pg Client or a PGlite instance, e.g. postgresStore({ client: new pg.Pool(...) }) or postgresStore({ client: new PGlite() })',
      client,
    )
  }
}

/** The shared limits check, and the longest id the tables' indexes keep. */
function checkLimits(value: unknown): void {
  const idBytes = checks.limits(value)?.maxLogIdBytes
  if (idBytes !== undefined && idBytes > POSTGRES_MAX_LOG_ID_BYTES) {
    checks.invalid('limits.maxLogIdBytes', `at most ${POSTGRES_MAX_LOG_ID_BYTES}, the longest id the tables' indexes keep`, idBytes)
  }
}

/** Throws `INVALID_ARGUMENT` for the first option that is not what `postgresStore` takes. */
export function checkOptions(options: unknown): asserts options is PostgresStoreOptions {
  const given = checks.object(options, '{ client: pool }')
  // `pglite` and `pool` are the names an app reaches for first: say where their value goes.
  const moved = Object.keys(given).find((name) => name === 'pglite' || name === 'pool')
  if (moved !== undefined) {
    checks.refuse(
      `unknown option "${moved}"; its options are ${OPTION_NAMES.join(', ')}. ` +
        `Pass the ${moved === 'pglite' ? 'PGlite instance' : 'pool'} as client: postgresStore({ client }).`,
    )
  }
  checks.knownKeys(given, OPTION_NAMES)
  checkClient(given.client)
  for (const name of ['schema', 'tablePrefix'] as const) {
    if (given[name] !== undefined && typeof given[name] !== 'string') checks.invalid(name, 'a string', given[name])
  }
  checks.clock(given.clock)
  checkLimits(given.limits)
  checkRetryOptions('postgresStore', given.retry)
  checks.timeoutMs('timeoutMs', given.timeoutMs)
  for (const name of ['closeClient', 'liveness'] as const) {
    if (given[name] !== undefined && typeof given[name] !== 'boolean') checks.invalid(name, 'true or false', given[name])
  }
}
