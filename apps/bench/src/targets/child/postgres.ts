import type { LogRecord } from '@tanstack/ai-harness/store'
import { postgresStore } from '@tanstack/ai-harness-postgres'
import type { ChildAccess } from './access.js'
import { countedPool } from '../counted-pool.js'
import { RequestCounter } from '../requests.js'
import type { ChildConnection } from '../target.js'
import { bareReadSql } from './sql-read.js'

export function postgresAccess(connection: Extract<ChildConnection, { store: 'postgres' }>): ChildAccess {
  const requests = new RequestCounter()
  const pool = countedPool(requests, 2)
  const { schema } = connection
  return {
    requests,
    createStore: () => postgresStore({ client: pool, schema }),
    bareRead: async (logId) =>
      (await pool.query<{ record: string }>(bareReadSql(schema), [logId])).rows.map((row) => JSON.parse(row.record) as LogRecord),
    close: () => pool.end(),
  }
}
