/**
 * @tanstack/ai-harness-postgres — the harness store on PostgreSQL, through `pg`
 * (node-postgres) or embedded PGlite, with the same SQL.
 * @packageDocumentation
 */
import {
  type HarnessStore,
  HarnessError,
  type LeaseStore,
  type SessionListStore,
  type StoreLimits,
  type WakeupStore,
} from '@tanstack/ai-harness/store'
import { createContext } from './context.js'
import { type DataDirLock, fileDataDirOf, lockDataDir } from './data-dir-lock.js'
import { isPGlite } from './driver-types.js'
import { createDriver } from './driver.js'
import { createLiveness } from './liveness.js'
import { listenerFor, wakeupChannel } from './notifications.js'
import { leaseStore } from './leases.js'
import { logOperations } from './log.js'
import { runMigrations, type SchemaStatus, schemaStatus } from './migrations.js'
import { checkOptions, POSTGRES_DEFAULT_LIMITS, POSTGRES_DEFAULT_TIMEOUT_MS, type PostgresStoreOptions } from './options.js'
import { statements, tableNames } from './sql.js'
import { isTransientPostgresError } from './transient.js'
import { sessionListStore, wakeupStore } from './wakeups.js'

export type { PostgresClient, PgPoolLike, PgPoolClientLike, PgClientLike, PGliteLike } from './driver-types.js'
export type { SchemaStatus } from './migrations.js'
export { isTransientPostgresError } from './transient.js'
export { DATA_DIR_LOCK_FILE, type DataDirLock, DataDirLockedError, lockDataDir } from './data-dir-lock.js'
export { DeadlineExceededError } from './pg-driver.js'
export {
  POSTGRES_DEFAULT_LIMITS,
  POSTGRES_DEFAULT_TIMEOUT_MS,
  POSTGRES_MAX_LOG_ID_BYTES,
  type PostgresStoreOptions,
} from './options.js'

/** The store, plus what only a SQL store has: schema management and a raw dump. */
export interface PostgresStore extends HarnessStore {
  /** Leases, with liveness: `orphans` lists the sessions of dead holders (see the README). */
  readonly leases: LeaseStore & Required<Pick<LeaseStore, 'orphans'>>
  readonly wakeups: WakeupStore
  readonly sessions: SessionListStore
  /** The database server's time in ms since the epoch (the injected clock's, when one was given). */
  now(): Promise<number>
  /** Creates or updates the tables. Idempotent and safe from many processes at once; returns the versions it applied. */
  migrate(): Promise<number[]>
  /**
   * Whether the schema exists and which migrations it lacks, read without creating or
   * changing anything: for a tool that must only read (an inspector) and should say
   * "no such schema" rather than create one from a typo.
   */
  schemaStatus(): Promise<SchemaStatus>
  /** Every row of this store's tables, every column as text, one row a line. For tests and support. */
  dump(): Promise<string>
  close(): Promise<void>
}

/**
 * Opens the harness store on a PostgreSQL database. Call `migrate()` once before
 * use (at startup or in a deploy step); it is cheap when the tables are current.
 * Throws `INVALID_ARGUMENT` naming the option when an option is not what it takes.
 *
 * ```ts
 * import pg from 'pg'
 * const store = postgresStore({ client: new pg.Pool({ connectionString: process.env.DATABASE_URL }) })
 * await store.migrate()
 * ```
 */
export function postgresStore(options: PostgresStoreOptions): PostgresStore {
  checkOptions(options)
  const names = tableNames(options.schema ?? 'public', options.tablePrefix ?? 'harness_')
  const enabled = options.liveness ?? true
  // Taken first: a second process on the folder is refused before it runs a statement.
  const folderLock = enabled ? lockPGliteFolder(options.client) : undefined
  const timeoutMs = options.timeoutMs ?? POSTGRES_DEFAULT_TIMEOUT_MS
  const liveness = createLiveness(options.client, enabled, timeoutMs)
  const sql = statements(names, liveness.kind)
  const driver = createDriver(options.client, { timeoutMs })
  const limits: StoreLimits = { ...POSTGRES_DEFAULT_LIMITS, ...definedOnly(options.limits) }
  const ctx = createContext({
    driver,
    sql,
    names,
    limits,
    liveness,
    clock: options.clock,
    retry: options.retry,
    isTransient: options.retry?.isTransient ?? isTransientPostgresError,
  })
  const log = logOperations(ctx)
  let closed = false

  return {
    limits,
    leases: leaseStore(ctx),
    wakeups: wakeupStore(ctx, wakeupChannel(names.schemaName, names.prefix), listenerFor(options.client)),
    sessions: sessionListStore(ctx),
    append: log.append,
    read: log.read,
    delete: log.delete,

    async now() {
      if (options.clock) return options.clock.now()
      const [row] = await ctx.run('now', () => driver.query(sql.serverNow))
      return Number(row?.now)
    },

    async migrate() {
      const applied = await ctx.run('migrate', () => runMigrations(driver, names, sql))
      // Called once at start-up: prepare the statements now, not in a takeover's first steps.
      await driver.warm?.(Object.values(sql).filter((text): text is string => typeof text === 'string' && text.includes('$1')))
      return applied
    },
    schemaStatus: () => ctx.run('schemaStatus', () => schemaStatus(driver, names, sql)),

    async dump() {
      const lines: string[] = []
      for (const { table, text } of sql.dump) {
        const rows = await ctx.run('dump', () => driver.query(text))
        for (const row of rows) lines.push([table, ...Object.values(row).map((v) => (v === null ? '\\N' : String(v)))].join('\t'))
      }
      return lines.join('\n')
    },

    async close() {
      if (closed) return
      closed = true
      // Ends this holder first: its leases become orphans that the next instance takes at once.
      await liveness.close().catch(() => {})
      folderLock?.release()
      if (!options.closeClient) return
      try {
        await driver.close()
      } catch (error) {
        throw new HarnessError(
          'STORE_UNAVAILABLE',
          `The PostgreSQL client did not close (${String((error as Error)?.message ?? error)}); connections still waiting on the server are left to the operating system.`,
          { cause: error },
        )
      }
    },
  }
}

/** The data folder of a file-backed PGlite, locked for this process; undefined for any other client. */
function lockPGliteFolder(client: PostgresStoreOptions['client']): DataDirLock | undefined {
  if (!isPGlite(client)) return undefined
  const dir = fileDataDirOf((client as { dataDir?: string }).dataDir)
  return dir === undefined ? undefined : lockDataDir(dir)
}

/** `{ maxRecordBytes: undefined }` keeps the default instead of erasing it. */
function definedOnly(limits: Partial<StoreLimits> | undefined): Partial<StoreLimits> {
  return Object.fromEntries(Object.entries(limits ?? {}).filter(([, value]) => value !== undefined))
}
