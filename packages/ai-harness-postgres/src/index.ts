/**
 * @tanstack/ai-harness-postgres — the harness store on PostgreSQL, through `pg`
 * (node-postgres) or embedded PGlite, with the same SQL.
 * @packageDocumentation
 */
import {
  type AppendResult,
  assertExpectedSeq,
  assertLogId,
  type Clock,
  DEFAULT_MAX_LOG_ID_BYTES,
  HarnessError,
  type HarnessStore,
  type Lease,
  LeaseHeldError,
  LeaseLostError,
  type LeaseStore,
  LogConflictError,
  type LogEntry,
  type LogRecord,
  prepareBatch,
  type ReadOptions,
  type RetryOptions,
  type StoreLimits,
  systemClock,
  type Wakeup,
  type WakeupStore,
  withRetry,
} from '@tanstack/ai-harness/store'
import { createDriver, type Driver, type PostgresClient, type Row } from './driver.js'
import { runMigrations } from './migrations.js'
import { statements, tableNames } from './sql.js'
import { isTransientPostgresError } from './transient.js'

export type { PostgresClient, PgPoolLike, PgPoolClientLike, PgClientLike, PGliteLike } from './driver.js'
export { isTransientPostgresError } from './transient.js'

/**
 * The limits this store declares. A record is one `text` value and a batch one
 * statement parameter, so PostgreSQL itself would take far more; these keep one
 * append to one modest round trip, and match the memory store's defaults.
 */
export const POSTGRES_DEFAULT_LIMITS: StoreLimits = {
  maxRecordBytes: 256 * 1024,
  maxBatchBytes: 1024 * 1024,
  // A text key in a btree index; far below PostgreSQL's ~2700-byte index row limit.
  maxLogIdBytes: DEFAULT_MAX_LOG_ID_BYTES,
}

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
  /** Time for leases and wakeups. Default: the system clock. */
  clock?: Clock
  /** Override the declared limits (see `POSTGRES_DEFAULT_LIMITS`). */
  limits?: Partial<StoreLimits>
  /** Backoff for transient errors. `isTransient` defaults to `isTransientPostgresError`. */
  retry?: Partial<RetryOptions>
  /** End the pool/client or close PGlite on `close()`. Default false: the app owns its client. */
  closeClient?: boolean
}

/** The store, plus what only a SQL store has: schema management and a raw dump. */
export interface PostgresStore extends HarnessStore {
  readonly leases: LeaseStore
  readonly wakeups: WakeupStore
  /** Creates or updates the tables. Idempotent and safe from many processes at once; returns the versions it applied. */
  migrate(): Promise<number[]>
  /** Every row of this store's tables, every column as text, one row a line. For tests and support. */
  dump(): Promise<string>
  close(): Promise<void>
}

const sqlStateOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** A finite time or duration in whole ms, as the bigint columns hold it. */
function wholeMs(value: number, what: string, round: (x: number) => number = Math.ceil): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new HarnessError('INVALID_ARGUMENT', `${what} must be a finite number of milliseconds, not ${String(value)}.`)
  }
  return round(value)
}

/**
 * Opens the harness store on a PostgreSQL database. Call `migrate()` once before
 * use (at startup or in a deploy step); it is cheap when the tables are current.
 *
 * ```ts
 * import pg from 'pg'
 * const store = postgresStore({ client: new pg.Pool({ connectionString: process.env.DATABASE_URL }) })
 * await store.migrate()
 * ```
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  const names = tableNames(options.schema ?? 'public', options.tablePrefix ?? 'harness_')
  const sql = statements(names)
  const driver: Driver = createDriver(options.client)
  const clock = options.clock ?? systemClock
  const limits: StoreLimits = { ...POSTGRES_DEFAULT_LIMITS, ...options.limits }
  const isTransient = options.retry?.isTransient ?? isTransientPostgresError
  let closed = false

  /** Runs one unit of work, retrying it whole on transient failures; conflicts pass straight through. */
  async function run<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await withRetry(work, { ...options.retry, isTransient })
    } catch (error) {
      if (error instanceof HarnessError) throw error
      if (!isTransient(error)) throw explain(error, what)
      throw new HarnessError(
        'STORE_UNAVAILABLE',
        `PostgreSQL kept failing during ${what} with a transient error (${String((error as Error)?.message ?? error)}). ` +
          'Check that the database is up and reachable; for an append, read the log back before deciding to write again.',
        { cause: error },
      )
    }
  }

  function explain(error: unknown, what: string): unknown {
    const state = sqlStateOf(error)
    if (state === '42P01' || state === '3F000') {
      return new HarnessError(
        'STORE_UNAVAILABLE',
        `The harness tables in schema ${names.schema} (prefix "${names.prefix}") are missing during ${what}. Call await store.migrate() once before using the store.`,
        { cause: error },
      )
    }
    return error
  }

  async function conflict(logId: string, expectedSeq: number, cause?: unknown): Promise<LogConflictError> {
    let actual: number | undefined
    try {
      const [row] = await driver.query(sql.nextSeq, [logId])
      actual = row ? Number(row.next_seq) : 1
    } catch {
      actual = undefined // only a hint for the message; the conflict stands either way
    }
    return new LogConflictError(
      logId,
      expectedSeq,
      actual === expectedSeq ? undefined : actual,
      cause === undefined ? undefined : { cause },
    )
  }

  const toLease = (logId: string, owner: string, row: Row): Lease => ({
    logId,
    owner,
    fence: Number(row.fence),
    expiresAt: Number(row.expires_at),
  })
  const toWakeup = (row: Row): Wakeup => ({ logId: String(row.log_id), at: Number(row.at) })
  const now = () => wholeMs(clock.now(), 'clock.now()', Math.floor)

  const leases: LeaseStore = {
    async acquire(logId, owner, ttlMs) {
      assertLogId(logId, limits)
      const ttl = wholeMs(ttlMs, 'ttlMs')
      const [row] = await run('lease acquire', () => driver.query(sql.acquireLease, [logId, owner, now(), ttl]))
      if (row) return toLease(logId, owner, row)
      const [holder] = await run('lease acquire', () => driver.query(sql.leaseExpiry, [logId])).catch(() => [])
      throw new LeaseHeldError(logId, holder ? Number(holder.expires_at) : undefined)
    },
    async renew(lease, ttlMs) {
      const ttl = wholeMs(ttlMs, 'ttlMs')
      const [row] = await run('lease renew', () => driver.query(sql.renewLease, [lease.logId, lease.owner, lease.fence, now(), ttl]))
      if (!row) throw new LeaseLostError(lease.logId)
      return { ...lease, expiresAt: Number(row.expires_at) }
    },
    async release(lease) {
      const [row] = await run('lease release', () => driver.query(sql.releaseLease, [lease.logId, lease.owner, lease.fence]))
      if (!row) throw new LeaseLostError(lease.logId, 'is no longer held by this owner, so it was not released')
    },
  }

  const wakeups: WakeupStore = {
    async schedule(logId, at) {
      assertLogId(logId, limits)
      // Rounded up: a wakeup is "no earlier than at".
      const when = wholeMs(at, 'A wakeup time')
      await run('wakeup schedule', () => driver.query(sql.scheduleWakeup, [logId, when]))
    },
    async cancel(logId) {
      assertLogId(logId, limits)
      await run('wakeup cancel', () => driver.query(sql.cancelWakeup, [logId]))
    },
    async due(limit) {
      const rows = await run('wakeup due', () => driver.query(sql.dueWakeups, [now(), Math.max(0, Math.floor(limit))]))
      return rows.map(toWakeup)
    },
    async claim(limit, holdMs) {
      const hold = wholeMs(holdMs, 'holdMs')
      const rows = await run('wakeup claim', () => driver.query(sql.claimWakeups, [now(), Math.max(0, Math.floor(limit)), hold]))
      return rows.map(toWakeup)
    },
  }

  return {
    limits,
    leases,
    wakeups,

    async append(logId: string, expectedSeq: number, records: readonly LogRecord[]): Promise<AppendResult> {
      assertLogId(logId, limits)
      assertExpectedSeq(expectedSeq)
      // Every limit is checked before the database sees a byte.
      const batch = prepareBatch(records, limits)
      if (batch.json.length === 0) return { nextSeq: expectedSeq }
      // A retry after a lost reply finds the head already moved: a conflict, never a second copy.
      const [row] = await run('append', async () => {
        try {
          return expectedSeq === 1
            ? await driver.query(sql.appendFirst, [logId, batch.json])
            : await driver.query(sql.appendNext, [logId, expectedSeq, batch.json])
        } catch (error) {
          // unique_violation: an entry row already holds one of these seqs.
          if (sqlStateOf(error) === '23505') throw await conflict(logId, expectedSeq, error)
          throw error
        }
      })
      if (row?.next_seq === null || row?.next_seq === undefined) throw await conflict(logId, expectedSeq)
      return { nextSeq: Number(row.next_seq) }
    },

    async read(logId: string, readOptions: ReadOptions = {}): Promise<LogEntry[]> {
      assertLogId(logId, limits)
      const after = Math.max(0, Math.floor(readOptions.after ?? 0))
      const limit = readOptions.limit === undefined ? null : Math.max(0, Math.floor(readOptions.limit))
      const last = limit === null ? Number.MAX_SAFE_INTEGER : after + limit
      const rows = await run('read', () => driver.query(sql.read, [logId, after, last, limit]))
      return rows.map((row) => ({ seq: Number(row.seq), record: JSON.parse(String(row.record)) as LogRecord }))
    },

    async delete(logId: string): Promise<void> {
      assertLogId(logId, limits)
      await run('delete', () =>
        driver.transaction(async (tx) => {
          await tx.query(sql.deleteHead, [logId])
          await tx.query(sql.deleteRest, [logId])
        }),
      )
    },

    migrate: () => run('migrate', () => runMigrations(driver, names, sql)),

    async dump() {
      const lines: string[] = []
      for (const { table, text } of sql.dump) {
        const rows = await run('dump', () => driver.query(text))
        for (const row of rows) lines.push([table, ...Object.values(row).map((v) => (v === null ? '\\N' : String(v)))].join('\t'))
      }
      return lines.join('\n')
    },

    async close() {
      if (closed) return
      closed = true
      if (options.closeClient) await driver.close()
    },
  }
}
