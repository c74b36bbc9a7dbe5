import { PGlite } from '@electric-sql/pglite'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { postgresStore } from '@tanstack/ai-harness-postgres'
import type { ChildAccess } from './access.js'
import { countedPGlite } from '../counted-pglite.js'
import { RequestCounter } from '../requests.js'
import type { ChildConnection } from '../target.js'
import { bareReadSql } from './sql-read.js'

/** Opens the folder the parent wrote (and closed): PGlite is one process at a time. */
export async function pgliteAccess(
  connection: Extract<ChildConnection, { store: 'pglite' }>,
  mark?: (phase: string) => void,
): Promise<ChildAccess> {
  const requests = new RequestCounter()
  const db = countedPGlite(await PGlite.create(connection.dataDir), requests)
  mark?.('pglite open')
  const { schema } = connection
  return {
    requests,
    createStore: () => postgresStore({ client: db, schema }),
    bareRead: async (logId) =>
      ((await db.query(bareReadSql(schema), [logId])).rows as Array<{ record: string }>).map((row) => JSON.parse(row.record) as LogRecord),
    close: () => db.close(),
  }
}
