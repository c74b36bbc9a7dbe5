import type { PostgresClient } from '@tanstack/ai-harness-postgres'
import { postgresStore } from '@tanstack/ai-harness-postgres'
import type { RequestCounter } from './requests.js'
import type { ChildConnection, StoreName, Target } from './target.js'

/** Runs one statement on the target's client and returns its rows. */
export type RunSql = (text: string, values?: unknown[]) => Promise<Array<Record<string, unknown>>>

/**
 * PostgreSQL and PGlite share everything but the client: the store's own schema for
 * this run, and a `bare` table beside it for the baseline write.
 */
export async function sqlTarget(options: {
  name: Extract<StoreName, 'postgres' | 'pglite'>
  client: PostgresClient
  run: RunSql
  requests: RequestCounter
  schema: string
  childConnection: () => ChildConnection
  close: () => Promise<void>
}): Promise<Target> {
  const { client, run, schema } = options
  await postgresStore({ client, schema }).migrate()
  // Shaped like the store's entry table: a text key, the record as text.
  await run(`CREATE TABLE IF NOT EXISTS "${schema}".bare (key text COLLATE "C" PRIMARY KEY, value text NOT NULL)`)
  const insert = `INSERT INTO "${schema}".bare (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1 AS won`
  return {
    name: options.name,
    requests: options.requests,
    createStore: () => postgresStore({ client, schema }),
    async bareWrite(key, bytes) {
      const rows = await run(insert, [key, bytes])
      if (rows.length !== 1) throw new Error(`bare write conflict at ${key}`)
    },
    childConnection: options.childConnection,
    async close() {
      try {
        await run(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      } finally {
        await options.close()
      }
    },
  }
}
