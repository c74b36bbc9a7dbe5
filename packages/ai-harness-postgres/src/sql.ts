import { HarnessError, MAX_TIME_MS, WAITING_FOR_PERSON } from '@tanstack/ai-harness/store'

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
  /** The head rows of layout version 1 (one per log, its next free seq); dropped by migration 2. */
  readonly logs: string
  /**
   * One row per record: `(log_id, seq)` is the primary key, `record` is the JSON text.
   * The primary key is the compare-and-set of `append`.
   */
  readonly entries: string
  readonly leases: string
  /** The sequence every lease's fence is drawn from, for every session: fences never repeat. */
  readonly fences: string
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
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema) || schema.length > MAX_IDENTIFIER) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `The schema ${JSON.stringify(schema)} is not a plain identifier: use letters, digits and _ (at most 63, not starting with a digit), e.g. 'harness'.`,
    )
  }
  if (typeof prefix !== 'string' || !PREFIX.test(prefix) || prefix.length + LONGEST_SUFFIX > MAX_IDENTIFIER) {
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
    fences: table('fences'),
    wakeups: table('wakeups'),
    migrations: table('migrations'),
    wakeupsAtIndex: quote(`${prefix}wakeups_at`),
  }
}

/**
 * The time of a lease or wakeup check, in ms since the epoch: the injected clock's time
 * when the store has one (the parameter), else the server's. `statement_timestamp()` is
 * one value for the whole statement, so every use of it in a statement agrees; rounded
 * down, so "due" is never early.
 */
const now = (param: string) => `COALESCE(${param}::bigint, floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint)`

/** A time plus a duration, kept within the range every store accepts. */
const later = (time: string, duration: string) => `LEAST(${time} + ${duration}::bigint, ${MAX_TIME_MS})`

/**
 * The four append statements: one record or many, unfenced or fenced. Parameters:
 * $1 log id, $2 expected seq, $3 the record text (one) or texts (many), and when fenced
 * $4 the lease's owner, $5 its fence. Each is one INSERT of the batch's rows; no row
 * is read back, and no other row is written.
 *
 * - The compare-and-set is the primary key `(log_id, seq)`: a seq that is already taken
 *   (a stale writer, a writer inside an earlier batch, a retry of a batch that landed)
 *   is a unique violation, which fails the whole statement (never ON CONFLICT DO
 *   NOTHING, which would write the rest of an overlapping batch).
 * - A seq past the end (which would leave a gap) is refused by the predecessor check:
 *   rows are written only when `expectedSeq - 1` exists, or `expectedSeq` is 1.
 * - Unfenced, the predecessor is locked FOR KEY SHARE, so a `delete` in flight waits for
 *   this append (and then deletes its rows too) or this append waits for the delete and
 *   finds no predecessor. Fenced, the lease row is locked FOR SHARE instead: a `delete`
 *   (which removes the lease first) or a new `acquire` waits for this append, or this
 *   append waits for them and finds its lease gone. Each statement takes one lock, so
 *   an append and a delete can never wait on each other in a cycle.
 */
function appendStatement(t: TableNames, many: boolean, fenced: boolean): string {
  const rows = many
    ? `SELECT $1::text, $2::bigint - 1 + r.ord, r.record FROM unnest($3::text[]) WITH ORDINALITY AS r(record, ord)`
    : 'SELECT $1::text, $2::bigint, $3::text'
  const predecessor = `($2::bigint = 1 OR EXISTS (SELECT 1 FROM ${t.entries} p WHERE p.log_id = $1::text AND p.seq = $2::bigint - 1${fenced ? '' : ' FOR KEY SHARE'}))`
  const lease = `EXISTS (SELECT 1 FROM ${t.leases} l WHERE l.log_id = $1::text AND l.owner = $4::text AND l.fence = $5::bigint FOR SHARE)`
  return `
INSERT INTO ${t.entries} (log_id, seq, record)
${rows}
WHERE ${fenced ? `${lease} AND ` : ''}${predecessor}
RETURNING seq`
}

/**
 * Many sessions' appends in one statement (group commit, see `group-commit.ts`), each
 * with its own checks and its own outcome. Parameters, one element per append ($1–$5):
 * $1 log ids (all distinct), $2 expected seqs, $3 record counts, $4 lease owners (null:
 * unfenced), $5 fences; $6 every record's text, append after append.
 *
 * Each append is checked exactly as its single statement checks it: its lease locked
 * FOR SHARE when fenced, its predecessor (locked FOR KEY SHARE when unfenced), and in
 * addition its first seq free, so a conflict with a committed row is that append's
 * outcome instead of a unique violation of the whole statement. Only the appends that
 * pass are inserted, in (log id, seq) order, so two batches that touch the same logs
 * wait for each other in one order and never deadlock. The primary key is still the
 * compare-and-set: an append that races a concurrent writer of its log fails the whole
 * statement with a unique violation, and the caller sends each append on its own.
 * Returns one row per append: `i` (1-based), `held`, `landed` (rows written: all or
 * none), and for an append that did not land the log's last seq.
 */
function appendBatchStatement(t: TableNames): string {
  return `
WITH a AS MATERIALIZED (
  SELECT a.i, a.log_id, a.seq, a.n,
    (sum(a.n) OVER (ORDER BY a.i) - a.n)::int AS skip,
    (a.owner IS NULL OR EXISTS (
      SELECT 1 FROM ${t.leases} l WHERE l.log_id = a.log_id AND l.owner = a.owner AND l.fence = a.fence FOR SHARE)) AS held,
    (a.seq = 1 OR CASE WHEN a.owner IS NULL
      THEN EXISTS (SELECT 1 FROM ${t.entries} p WHERE p.log_id = a.log_id AND p.seq = a.seq - 1 FOR KEY SHARE)
      ELSE EXISTS (SELECT 1 FROM ${t.entries} p WHERE p.log_id = a.log_id AND p.seq = a.seq - 1) END) AS after_last,
    NOT EXISTS (SELECT 1 FROM ${t.entries} e WHERE e.log_id = a.log_id AND e.seq = a.seq) AS free
  FROM unnest($1::text[], $2::bigint[], $3::int[], $4::text[], $5::bigint[]) WITH ORDINALITY AS a(log_id, seq, n, owner, fence, i)
), landed AS (
  INSERT INTO ${t.entries} (log_id, seq, record)
  SELECT a.log_id, a.seq - 1 + r.ord, r.record
  FROM a CROSS JOIN LATERAL unnest(($6::text[])[a.skip + 1 : a.skip + a.n]) WITH ORDINALITY AS r(record, ord)
  WHERE a.held AND a.after_last AND a.free
  ORDER BY a.log_id COLLATE "C", r.ord
  RETURNING log_id
)
SELECT a.i, a.held, COALESCE(w.rows, 0) AS landed,
  CASE WHEN w.rows IS NULL THEN (SELECT max(e.seq) FROM ${t.entries} e WHERE e.log_id = a.log_id) END AS last_seq
FROM a LEFT JOIN (SELECT log_id, count(*) AS rows FROM landed GROUP BY log_id) w ON w.log_id = a.log_id
ORDER BY a.i`
}

/**
 * How a store tells a dead holder from a live one (see `liveness.ts`):
 * - `locks` (pg): each live holder keeps a session-level advisory lock (class
 *   {@link LIVENESS_LOCK_CLASS}, key = its holder id) on a connection of its own; the
 *   server frees it when that connection ends, so a holder whose lock is free is dead.
 * - `list` (PGlite): the process holds the data folder, so the live holders are exactly
 *   the open store instances of this process, passed in as a parameter.
 * - `none`: nobody is provably dead; leases end by expiry or release.
 */
export type LivenessKind = 'locks' | 'list' | 'none'

/** Class id of the liveness advisory locks ('AHLV'). */
export const LIVENESS_LOCK_CLASS = 0x41484c56

/** True when the holder of the lease row `l` is provably dead. `live` is the parameter of the live holders (kind `list`). */
function deadHolder(kind: LivenessKind, live: string): string {
  if (kind === 'none') return 'false'
  if (kind === 'list') return `(l.holder IS NOT NULL AND NOT (l.holder = ANY(${live}::int[])))`
  return `(l.holder IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM pg_locks k
    WHERE k.locktype = 'advisory' AND k.granted AND k.classid = ${LIVENESS_LOCK_CLASS}::oid AND k.objid = l.holder::oid
      AND k.objsubid = 2 AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())))`
}

// long: the SQL text of every statement, one entry each: split, the schema would be read in pieces
/** The statements of one store. Parameters are numbered as the comment above each says. */
export function statements(t: TableNames, liveness: LivenessKind = 'locks') {
  return {
    // ---- log ------------------------------------------------------------------

    appendOne: appendStatement(t, false, false),
    appendMany: appendStatement(t, true, false),
    appendOneFenced: appendStatement(t, false, true),
    appendManyFenced: appendStatement(t, true, true),
    appendBatch: appendBatchStatement(t),

    /**
     * Why an append wrote nothing: the last seq, and whether the lease is still the
     * session's current one. $1 log id, $2 owner (null: unfenced), $3 fence.
     */
    appendRefused: `
SELECT (SELECT max(seq) FROM ${t.entries} WHERE log_id = $1::text) AS last_seq,
  ($2::text IS NULL OR EXISTS (SELECT 1 FROM ${t.leases} WHERE log_id = $1::text AND owner = $2::text AND fence = $3::bigint)) AS lease_held`,

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
     * Delete, first round (in a transaction): the lease and wakeup of exactly this id, and
     * every entry this statement sees. $1 log id. Returns `deleted`, the entries removed.
     * Removing the lease waits for fenced appends in flight; removing an entry waits for
     * an unfenced append that locked it as its predecessor.
     */
    deleteLog: `
WITH lease AS (DELETE FROM ${t.leases} WHERE log_id = $1::text),
wakeup AS (DELETE FROM ${t.wakeups} WHERE log_id = $1::text),
gone AS (DELETE FROM ${t.entries} WHERE log_id = $1::text RETURNING 1)
SELECT count(*) AS deleted FROM gone`,

    /**
     * Delete, next rounds, each with a fresh snapshot: the entries of appends the first
     * round waited for. Repeated until it deletes none. $1 log id.
     */
    deleteEntries: `
WITH gone AS (DELETE FROM ${t.entries} WHERE log_id = $1::text RETURNING 1)
SELECT count(*) AS deleted FROM gone`,

    // ---- leases ---------------------------------------------------------------

    /**
     * $1 log id, $2 owner, $3 now (null: the server's), $4 ttl, $5 the caller's holder id
     * (null: none), and for `list` liveness $6 the live holders. Takes the lease when it is
     * free, expired, the caller's own, or held by a dead holder. The fence comes from the
     * store-wide sequence, drawn after the row lock is taken when the lease changes hands,
     * so a later lease always has a greater fence, also across `release` and `delete`;
     * that greater fence is what makes a dead holder's fenced appends fail. No row back:
     * another owner holds it.
     */
    acquireLease: `
INSERT INTO ${t.leases} AS l (log_id, owner, fence, expires_at, holder)
VALUES ($1::text, $2::text, nextval('${t.fences}'), ${later(now('$3'), '$4')}, $5::int)
ON CONFLICT (log_id) DO UPDATE
SET owner = excluded.owner, fence = nextval('${t.fences}'), expires_at = excluded.expires_at, holder = excluded.holder
WHERE l.expires_at <= ${now('$3')} OR l.owner = excluded.owner OR ${deadHolder(liveness, '$6')}
RETURNING fence, expires_at`,

    /**
     * Unexpired leases of dead holders, in id order. $1 now (null: the server's), $2 limit,
     * and for `list` liveness $3 the live holders.
     */
    orphanLeases: `
SELECT l.log_id FROM ${t.leases} AS l
WHERE l.expires_at > ${now('$1')} AND ${deadHolder(liveness, '$3')}
ORDER BY l.log_id
LIMIT $2::bigint`,

    /** For the LEASE_HELD message only. $1 log id. */
    leaseExpiry: `SELECT expires_at FROM ${t.leases} WHERE log_id = $1::text`,

    /** $1 log id, $2 owner, $3 fence, $4 now (null: the server's), $5 ttl. No row back: the lease is lost. */
    renewLease: `
UPDATE ${t.leases} SET expires_at = ${later(now('$4'), '$5')}
WHERE log_id = $1::text AND owner = $2::text AND fence = $3::bigint AND expires_at > ${now('$4')}
RETURNING expires_at`,

    /**
     * $1 log id, $2 owner, $3 fence. Removes the row: fences come from the sequence, so
     * no row has to stay behind to keep them growing. No row back: not the current lease.
     */
    releaseLease: `
DELETE FROM ${t.leases}
WHERE log_id = $1::text AND owner = $2::text AND fence = $3::bigint
RETURNING fence`,

    // ---- wakeups --------------------------------------------------------------

    /** $1 log id, $2 at. */
    /** $1 log id, $2 at, $3 the notification channel, $4 now (null: the server's): a wakeup due at once notifies the watchers. */
    scheduleWakeup: `
WITH up AS (
  INSERT INTO ${t.wakeups} (log_id, at) VALUES ($1::text, $2::bigint)
  ON CONFLICT (log_id) DO UPDATE SET at = excluded.at
  RETURNING at
)
SELECT pg_notify($3::text, '') FROM up WHERE up.at <= ${now('$4')}`,

    /** $1 log id. */
    cancelWakeup: `DELETE FROM ${t.wakeups} WHERE log_id = $1::text`,

    /** $1 now (null: the server's), $2 limit (null: no limit). */
    dueWakeups: `
SELECT log_id, at FROM ${t.wakeups}
WHERE at <= ${now('$1')}
ORDER BY at, log_id
LIMIT $2::bigint`,

    /**
     * $1 now (null: the server's), $2 limit (null: no limit), $3 hold. Locks up to $2 due
     * rows, skipping rows another worker has locked, and moves them to now + hold in the
     * same statement. A row another worker moved meanwhile is re-checked against
     * `at <= now` and dropped.
     */
    claimWakeups: `
WITH due AS (
  SELECT log_id, at FROM ${t.wakeups}
  WHERE at <= ${now('$1')}
  ORDER BY at, log_id
  LIMIT $2::bigint
  FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE ${t.wakeups} AS w SET at = ${later(now('$1'), '$3')}
  FROM due WHERE w.log_id = due.log_id
  RETURNING w.log_id, due.at
)
SELECT log_id, at FROM claimed ORDER BY at, log_id`,

    // ---- session listings -----------------------------------------------------

    /**
     * $1 after ('' from the start: ids are never empty), $2 limit. The distinct log ids
     * after $1, by a walk of the entries' primary key: each step is one index probe for
     * the next id (a loose index scan), so a page costs `limit` probes however long the
     * logs are. The walk stops when the outer LIMIT has its rows.
     */
    listSessions: `
WITH RECURSIVE ids(log_id) AS (
  (SELECT log_id FROM ${t.entries} WHERE log_id > $1::text ORDER BY log_id LIMIT 1)
  UNION ALL
  SELECT (SELECT e.log_id FROM ${t.entries} AS e WHERE e.log_id > ids.log_id ORDER BY e.log_id LIMIT 1)
  FROM ids WHERE ids.log_id IS NOT NULL
)
SELECT log_id FROM ids WHERE log_id IS NOT NULL LIMIT $2::bigint`,

    /** $1 after ('' from the start), $2 limit. Served by the wakeups' (at, log_id) index. */
    waitingSessions: `
SELECT log_id FROM ${t.wakeups}
WHERE at = ${WAITING_FOR_PERSON} AND log_id > $1::text
ORDER BY log_id
LIMIT $2::bigint`,

    // ---- clock ----------------------------------------------------------------

    /** The server's time, as the lease and wakeup statements read it. */
    serverNow: `SELECT ${now('NULL')} AS now`,

    // ---- migrations -----------------------------------------------------------

    /**
     * Serializes `migrate()` across processes for one schema until the transaction
     * ends. $1 a fixed class id, $2 a hash of the schema name.
     */
    migrationLock: 'SELECT pg_advisory_xact_lock($1::int, $2::int)',
    /** $1 schema name. */
    schemaExists: 'SELECT 1 AS found FROM pg_namespace WHERE nspname = $1::text',
    appliedMigrations: `SELECT version FROM ${t.migrations} ORDER BY version`,
    /** $1 the migrations table's qualified, quoted name: null when it does not exist (to_regclass creates nothing and takes no lock). */
    migrationsTableExists: 'SELECT to_regclass($1::text) IS NOT NULL AS found',
    /** $1 version, $2 name. */
    recordMigration: `INSERT INTO ${t.migrations} (version, name) VALUES ($1::int, $2::text)`,

    // ---- dump (tests and support: every column as text) ----------------------

    dump: [
      { table: t.entries, text: `SELECT log_id, seq::text, record FROM ${t.entries} ORDER BY log_id, seq` },
      { table: t.leases, text: `SELECT log_id, owner, fence::text, expires_at::text FROM ${t.leases} ORDER BY log_id` },
      { table: t.wakeups, text: `SELECT log_id, at::text FROM ${t.wakeups} ORDER BY log_id` },
    ],
  } as const
}

export type Statements = ReturnType<typeof statements>
