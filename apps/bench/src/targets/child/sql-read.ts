/** The baseline read of a log on PostgreSQL or PGlite: every entry row in one query, in seq order. */
export const bareReadSql = (schema: string) => `SELECT record FROM "${schema}".harness_log_entries WHERE log_id = $1 ORDER BY seq`
