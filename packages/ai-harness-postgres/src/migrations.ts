import type { Driver } from './driver-types.js'
import { type Statements, type TableNames, statements } from './sql.js'

/**
 * The schema, as numbered steps. Append-only: a released step is never edited or
 * reordered; a change of layout is a new step. `migrate()` applies the missing ones
 * in order, inside one transaction that holds an advisory lock for the schema.
 */
export interface Migration {
  readonly version: number
  readonly name: string
  /** Statements, one per entry, run in order in the migration's transaction. */
  statements(t: TableNames): readonly string[]
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'logs, log entries, leases, wakeups',
    statements: (t) => [
      // COLLATE "C": ids compare byte by byte, so look-alike ids never collide and
      // wakeups order the same on every server, whatever its default collation.
      `CREATE TABLE IF NOT EXISTS ${t.logs} (
        log_id text COLLATE "C" PRIMARY KEY,
        next_seq bigint NOT NULL CHECK (next_seq > 1)
      )`,
      // record is text, not jsonb: jsonb refuses \u0000 and reorders keys. See README.
      `CREATE TABLE IF NOT EXISTS ${t.entries} (
        log_id text COLLATE "C" NOT NULL,
        seq bigint NOT NULL CHECK (seq >= 1),
        record text NOT NULL,
        PRIMARY KEY (log_id, seq)
      )`,
      `CREATE TABLE IF NOT EXISTS ${t.leases} (
        log_id text COLLATE "C" PRIMARY KEY,
        owner text NOT NULL,
        fence bigint NOT NULL,
        expires_at bigint NOT NULL,
        held boolean NOT NULL
      )`,
      `CREATE TABLE IF NOT EXISTS ${t.wakeups} (
        log_id text COLLATE "C" PRIMARY KEY,
        at bigint NOT NULL
      )`,
      `CREATE INDEX IF NOT EXISTS ${t.wakeupsAtIndex} ON ${t.wakeups} (at, log_id)`,
    ],
  },
  {
    version: 2,
    name: 'one-row appends, fences from a sequence, lease rows only while held',
    statements: (t) => [
      // Fences for every session from one sequence, so they never repeat for a session id,
      // also after delete removed its lease row (a tombstone would keep the deleted id).
      // CACHE 1: each nextval is greater than every value handed out before it, on any connection.
      `CREATE SEQUENCE IF NOT EXISTS ${t.fences} AS bigint MINVALUE 1 CACHE 1`,
      // Start above every fence of version 1, so a lease taken now supersedes each of them.
      `SELECT setval('${t.fences}', COALESCE((SELECT max(fence) FROM ${t.leases}), 0) + 1, false)`,
      // A released lease no longer keeps a row: the sequence keeps the fences growing.
      `DELETE FROM ${t.leases} WHERE NOT held`,
      `ALTER TABLE ${t.leases} DROP COLUMN held`,
      // The entries' primary key is the compare-and-set now; the head rows go. Entries are
      // dense and each head only said max(seq) + 1, so nothing is lost.
      `DROP TABLE ${t.logs}`,
    ],
  },
  {
    version: 3,
    name: 'the holder of each lease, for liveness',
    statements: (t) => [
      // The liveness key of the store instance that took the lease (see liveness.ts); null:
      // a holder whose liveness nobody can see, whose lease ends only by expiry or release.
      `ALTER TABLE ${t.leases} ADD COLUMN IF NOT EXISTS holder integer`,
    ],
  },
]

/** The bookkeeping table; created before any step, so it is not a step itself. */
const createMigrationsTable = (t: TableNames) => `CREATE TABLE IF NOT EXISTS ${t.migrations} (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`

/** Class id of the advisory lock ('AHMG'); the second key is a hash of the schema name. */
const LOCK_CLASS = 0x41484d47

/** FNV-1a of the schema name as a signed 32-bit int, the type pg_advisory_xact_lock takes. */
export function schemaLockKey(schema: string): number {
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode(schema)) {
    hash ^= byte
    hash = Math.imul(hash, 0x01000193)
  }
  return hash | 0
}

/**
 * Creates the schema and tables, or brings them up to date. Idempotent, and safe
 * from many processes at once: the advisory lock makes a second caller wait, and
 * then it finds every step applied. Returns the versions it applied.
 */
export async function runMigrations(driver: Driver, t: TableNames, sql: Statements = statements(t)): Promise<number[]> {
  return driver.transaction(async (tx) => {
    await tx.query(sql.migrationLock, [LOCK_CLASS, schemaLockKey(t.schemaName)])
    // Checked first: CREATE SCHEMA IF NOT EXISTS still needs CREATE on the database.
    const exists = await tx.query(sql.schemaExists, [t.schemaName])
    if (exists.length === 0) await tx.query(`CREATE SCHEMA IF NOT EXISTS ${t.schema}`)
    await tx.query(createMigrationsTable(t))
    const applied = new Set((await tx.query(sql.appliedMigrations)).map((row) => Number(row.version)))
    const done: number[] = []
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue
      for (const statement of migration.statements(t)) await tx.query(statement)
      await tx.query(sql.recordMigration, [migration.version, migration.name])
      done.push(migration.version)
    }
    return done
  })
}

/** What `schemaStatus()` finds: whether the schema exists, and the migrations not applied to it yet. */
export interface SchemaStatus {
  /** False: no schema of that name (a mistyped `schema` option?). */
  readonly schemaExists: boolean
  /** Versions `migrate()` would apply; every version when the tables are missing. Empty: ready to use. */
  readonly pending: number[]
}

/** Looks at the schema and its migrations table without creating, locking or changing anything. */
export async function schemaStatus(driver: Driver, t: TableNames, sql: Statements = statements(t)): Promise<SchemaStatus> {
  const all = migrations.map((m) => m.version)
  if ((await driver.query(sql.schemaExists, [t.schemaName])).length === 0) return { schemaExists: false, pending: all }
  const [table] = await driver.query(sql.migrationsTableExists, [t.migrations])
  if (!table?.found) return { schemaExists: true, pending: all }
  const applied = new Set((await driver.query(sql.appliedMigrations)).map((row) => Number(row.version)))
  return { schemaExists: true, pending: all.filter((version) => !applied.has(version)) }
}
