/**
 * The database as version 1 of this store (head rows) created and wrote it: its DDL and
 * its write statements, copied here as they were, so the migration to the one-row layout
 * is tested from a database made by that code, not by today's.
 */
export function layoutV1(schema: string) {
  const t = (name: string) => `"${schema}"."harness_${name}"`
  return {
    ddl: [
      `CREATE SCHEMA "${schema}"`,
      `CREATE TABLE ${t('migrations')} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      `CREATE TABLE IF NOT EXISTS ${t('logs')} (
        log_id text COLLATE "C" PRIMARY KEY,
        next_seq bigint NOT NULL CHECK (next_seq > 1)
      )`,
      `CREATE TABLE IF NOT EXISTS ${t('log_entries')} (
        log_id text COLLATE "C" NOT NULL,
        seq bigint NOT NULL CHECK (seq >= 1),
        record text NOT NULL,
        PRIMARY KEY (log_id, seq)
      )`,
      `CREATE TABLE IF NOT EXISTS ${t('leases')} (
        log_id text COLLATE "C" PRIMARY KEY,
        owner text NOT NULL,
        fence bigint NOT NULL,
        expires_at bigint NOT NULL,
        held boolean NOT NULL
      )`,
      `CREATE TABLE IF NOT EXISTS ${t('wakeups')} (
        log_id text COLLATE "C" PRIMARY KEY,
        at bigint NOT NULL
      )`,
      `CREATE INDEX IF NOT EXISTS "harness_wakeups_at" ON ${t('wakeups')} (at, log_id)`,
      `INSERT INTO ${t('migrations')} (version, name) VALUES (1, 'logs, log entries, leases, wakeups')`,
    ],
    /** $1 log id, $2 record texts. */
    appendFirst: `
WITH head AS (
  INSERT INTO ${t('logs')} (log_id, next_seq)
  VALUES ($1::text, 1 + cardinality($2::text[]))
  ON CONFLICT (log_id) DO NOTHING
  RETURNING next_seq
), written AS (
  INSERT INTO ${t('log_entries')} (log_id, seq, record)
  SELECT $1::text, r.ord, r.record
  FROM head CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS r(record, ord)
  RETURNING seq
)
SELECT (SELECT next_seq FROM head) AS next_seq, (SELECT count(*) FROM written) AS written`,
    /** $1 log id, $2 expected seq, $3 record texts. */
    appendNext: `
WITH head AS (
  UPDATE ${t('logs')} SET next_seq = next_seq + cardinality($3::text[])
  WHERE log_id = $1::text AND next_seq = $2::bigint
  RETURNING next_seq
), written AS (
  INSERT INTO ${t('log_entries')} (log_id, seq, record)
  SELECT $1::text, $2::bigint + r.ord - 1, r.record
  FROM head CROSS JOIN unnest($3::text[]) WITH ORDINALITY AS r(record, ord)
  RETURNING seq
)
SELECT (SELECT next_seq FROM head) AS next_seq, (SELECT count(*) FROM written) AS written`,
    /** $1 log id, $2 owner, $3 now, $4 ttl. */
    acquireLease: `
INSERT INTO ${t('leases')} AS l (log_id, owner, fence, expires_at, held)
VALUES ($1::text, $2::text, 1, $3::bigint + $4::bigint, true)
ON CONFLICT (log_id) DO UPDATE
SET owner = excluded.owner, fence = l.fence + 1, expires_at = excluded.expires_at, held = true
WHERE NOT l.held OR l.expires_at <= $3::bigint OR l.owner = excluded.owner
RETURNING fence, expires_at`,
    /** $1 log id, $2 owner, $3 fence. */
    releaseLease: `
UPDATE ${t('leases')} SET held = false
WHERE log_id = $1::text AND owner = $2::text AND fence = $3::bigint AND held
RETURNING fence`,
    /** $1 log id, $2 at. */
    scheduleWakeup: `INSERT INTO ${t('wakeups')} (log_id, at) VALUES ($1::text, $2::bigint) ON CONFLICT (log_id) DO UPDATE SET at = excluded.at`,
  }
}
