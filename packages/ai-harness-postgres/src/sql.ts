import { HarnessError } from '@tanstack/ai-harness/store'

/**
 * Every statement the store runs, in one place, top to bottom. Table names are the
 * only part that varies (schema and prefix); they are validated and quoted once in
 * `tableNames`, and the texts below are built once per store, never inside a method.
 * Every value goes in as a parameter. Schema creation lives in `migrations.ts`.
 */

/** Quoted, schema-qualified names of one store's tables. */
export interface TableNames {
  /** Unquoted schema name, as given. */
  readonly schemaName: string
  /** Unquoted table prefix, as given. */
  readonly prefix: string
  readonly schema: string
  /** One row per log: its next free seq. The compare-and-set of `append` happens on this row. */
  readonly logs: string
  /** One row per record: `(log_id, seq)` is the primary key, `record` is the JSON text. */
  readonly entries: string
  readonly leases: string
  readonly wakeups: string
  readonly migrations: string
  /** Unqualified: an index lives in its table's schema. */
  readonly wakeupsAtIndex: string
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/
const PREFIX = /^[A-Za-z0-9_]*$/
/** PostgreSQL cuts identifiers at 63 bytes; the longest table suffix is `migrations`/`log_entries`. */
const MAX_IDENTIFIER = 63
const LONGEST_SUFFIX = 'log_entries'.length

const quote = (identifier: string) => `"${identifier}"`

/** Validates a schema name and table prefix and returns the quoted table names. */
export function tableNames(schema: string, prefix: string): TableNames {
  if (!IDENTIFIER.test(schema) || schema.length > MAX_IDENTIFIER) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `The schema ${JSON.stringify(schema)} is not a plain identifier: use letters, digits and _ (at most 63, not starting with a digit), e.g. 'harness'.`,
    )
  }
  if (!PREFIX.test(prefix) || prefix.length + LONGEST_SUFFIX > MAX_IDENTIFIER) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `The table prefix ${JSON.stringify(prefix)} must be letters, digits and _ (at most ${MAX_IDENTIFIER - LONGEST_SUFFIX}), e.g. 'harness_'.`,
    )
  }
  const table = (name: string) => `${quote(schema)}.${quote(prefix + name)}`
  return {
    schemaName: schema,
    prefix,
    schema: quote(schema),
    logs: table('logs'),
    entries: table('log_entries'),
    leases: table('leases'),
    wakeups: table('wakeups'),
    migrations: table('migrations'),
    wakeupsAtIndex: quote(`${prefix}wakeups_at`),
  }
}

/** The statements of one store. Parameters are numbered as the comment above each says. */
export function statements(t: TableNames) {
  return {
    // ---- log ------------------------------------------------------------------

    /**
     * Append to an empty log. $1 log id, $2 record texts.
     * The head row is the compare-and-set: a second writer finds it (ON CONFLICT DO
     * NOTHING), inserts no head, and so inserts no entries. One statement, one commit.
     * Returns one row: `next_seq` (null on conflict) and `written`.
     */
    appendFirst: `
WITH head AS (
  INSERT INTO ${t.logs} (log_id, next_seq)
  VALUES ($1::text, 1 + cardinality($2::text[]))
  ON CONFLICT (log_id) DO NOTHING
  RETURNING next_seq
), written AS (
  INSERT INTO ${t.entries} (log_id, seq, record)
  SELECT $1::text, r.ord, r.record
  FROM head CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS r(record, ord)
  RETURNING seq
)
SELECT (SELECT next_seq FROM head) AS next_seq, (SELECT count(*) FROM written) AS written`,

    /**
     * Append at `expectedSeq > 1`. $1 log id, $2 expected seq, $3 record texts.
     * The UPDATE moves the head only when it still says `expectedSeq`; a concurrent
     * writer waits on the row lock, re-checks the condition against the committed
     * head and matches nothing. Seqs inside an earlier batch or past the end never
     * match, so there are no gaps and no overlaps. Same result row as `appendFirst`.
     */
    appendNext: `
WITH head AS (
  UPDATE ${t.logs} SET next_seq = next_seq + cardinality($3::text[])
  WHERE log_id = $1::text AND next_seq = $2::bigint
  RETURNING next_seq
), written AS (
  INSERT INTO ${t.entries} (log_id, seq, record)
  SELECT $1::text, $2::bigint + r.ord - 1, r.record
  FROM head CROSS JOIN unnest($3::text[]) WITH ORDINALITY AS r(record, ord)
  RETURNING seq
)
SELECT (SELECT next_seq FROM head) AS next_seq, (SELECT count(*) FROM written) AS written`,

    /** The log's next free seq after a conflict (no row: an empty log). $1 log id. */
    nextSeq: `SELECT next_seq FROM ${t.logs} WHERE log_id = $1::text`,

    /** $1 log id, $2 after, $3 limit (null: no limit). */
    /**
     * Read a page. $1 log id, $2 after, $3 last seq wanted, $4 limit. Seqs are dense, so the
     * page is exactly the range ($2, $3]: bounding it on both sides keeps the plan a short
     * index range scan, also where the planner has no statistics (PGlite never analyzes).
     */
    read: `
SELECT seq, record FROM ${t.entries}
WHERE log_id = $1::text AND seq > $2::bigint AND seq <= $3::bigint
ORDER BY seq
LIMIT $4::bigint`,

    /**
     * Delete, first of two statements in one transaction. $1 log id.
     * Removing the head first takes its row lock: an append in flight finishes before
     * (and its entries are then seen by the next statement), or waits and conflicts.
     */
    deleteHead: `DELETE FROM ${t.logs} WHERE log_id = $1::text`,

    /** Delete, second statement: entries, lease and wakeup of exactly this id. $1 log id. */
    deleteRest: `
WITH entries AS (DELETE FROM ${t.entries} WHERE log_id = $1::text),
lease AS (DELETE FROM ${t.leases} WHERE log_id = $1::text)
DELETE FROM ${t.wakeups} WHERE log_id = $1::text`,

    // ---- leases ---------------------------------------------------------------

    /**
     * $1 log id, $2 owner, $3 now, $4 ttl. Takes the lease when it is free, expired or
     * the caller's own; the fence grows on every acquire and the row outlives
     * `release`, so fences never repeat. No row back: another owner holds it.
     */
    acquireLease: `
INSERT INTO ${t.leases} AS l (log_id, owner, fence, expires_at, held)
VALUES ($1::text, $2::text, 1, $3::bigint + $4::bigint, true)
ON CONFLICT (log_id) DO UPDATE
SET owner = excluded.owner, fence = l.fence + 1, expires_at = excluded.expires_at, held = true
WHERE NOT l.held OR l.expires_at <= $3::bigint OR l.owner = excluded.owner
RETURNING fence, expires_at`,

    /** For the LEASE_HELD message only. $1 log id. */
    leaseExpiry: `SELECT expires_at FROM ${t.leases} WHERE log_id = $1::text AND held`,

    /** $1 log id, $2 owner, $3 fence, $4 now, $5 ttl. No row back: the lease is lost. */
    renewLease: `
UPDATE ${t.leases} SET expires_at = $4::bigint + $5::bigint
WHERE log_id = $1::text AND owner = $2::text AND fence = $3::bigint AND held AND expires_at > $4::bigint
RETURNING expires_at`,

    /** $1 log id, $2 owner, $3 fence. Keeps the row (and its fence). No row back: not the current lease. */
    releaseLease: `
UPDATE ${t.leases} SET held = false
WHERE log_id = $1::text AND owner = $2::text AND fence = $3::bigint AND held
RETURNING fence`,

    // ---- wakeups --------------------------------------------------------------

    /** $1 log id, $2 at. */
    scheduleWakeup: `
INSERT INTO ${t.wakeups} (log_id, at) VALUES ($1::text, $2::bigint)
ON CONFLICT (log_id) DO UPDATE SET at = excluded.at`,

    /** $1 log id. */
    cancelWakeup: `DELETE FROM ${t.wakeups} WHERE log_id = $1::text`,

    /** $1 now, $2 limit. */
    dueWakeups: `
SELECT log_id, at FROM ${t.wakeups}
WHERE at <= $1::bigint
ORDER BY at, log_id
LIMIT $2::bigint`,

    /**
     * $1 now, $2 limit, $3 hold. Locks up to $2 due rows, skipping rows another worker
     * has locked, and moves them to now + hold in the same statement. A row another
     * worker moved meanwhile is re-checked against `at <= now` and dropped.
     */
    claimWakeups: `
WITH due AS (
  SELECT log_id, at FROM ${t.wakeups}
  WHERE at <= $1::bigint
  ORDER BY at, log_id
  LIMIT $2::bigint
  FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE ${t.wakeups} AS w SET at = $1::bigint + $3::bigint
  FROM due WHERE w.log_id = due.log_id
  RETURNING w.log_id, due.at
)
SELECT log_id, at FROM claimed ORDER BY at, log_id`,

    // ---- migrations -----------------------------------------------------------

    /**
     * Serializes `migrate()` across processes for one schema until the transaction
     * ends. $1 a fixed class id, $2 a hash of the schema name.
     */
    migrationLock: 'SELECT pg_advisory_xact_lock($1::int, $2::int)',
    /** $1 schema name. */
    schemaExists: 'SELECT 1 AS found FROM pg_namespace WHERE nspname = $1::text',
    appliedMigrations: `SELECT version FROM ${t.migrations} ORDER BY version`,
    /** $1 version, $2 name. */
    recordMigration: `INSERT INTO ${t.migrations} (version, name) VALUES ($1::int, $2::text)`,

    // ---- dump (tests and support: every column as text) ----------------------

    dump: [
      { table: t.logs, text: `SELECT log_id, next_seq::text FROM ${t.logs} ORDER BY log_id` },
      { table: t.entries, text: `SELECT log_id, seq::text, record FROM ${t.entries} ORDER BY log_id, seq` },
      { table: t.leases, text: `SELECT log_id, owner, fence::text, expires_at::text, held::text FROM ${t.leases} ORDER BY log_id` },
      { table: t.wakeups, text: `SELECT log_id, at::text FROM ${t.wakeups} ORDER BY log_id` },
    ],
  } as const
}

export type Statements = ReturnType<typeof statements>
