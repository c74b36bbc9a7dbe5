import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { type PostgresStore, type PostgresStoreOptions, postgresStore } from '../src/index.js'
import { freshSchema, pgConfig } from './support.js'

type Extra = Omit<PostgresStoreOptions, 'client' | 'schema'>

/**
 * One database for a test file, on pg or PGlite, and store instances on it. On pg each
 * instance has its own pool: another "process". On PGlite they share the one connection.
 */
export interface Database {
  readonly name: 'pg' | 'PGlite'
  /** A fresh, migrated schema. */
  schema(label: string): Promise<string>
  /** Another store instance on `schema`. */
  instance(schema: string, extra?: Extra): PostgresStore
  /** Runs SQL as the test's own admin connection. */
  sql(text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>
  close(): Promise<void>
}

export function database(name: 'pg' | 'PGlite'): Database {
  const schemas: string[] = []
  const stores: PostgresStore[] = []
  let lite: PGlite | undefined
  let admin: pg.Pool | undefined
  const client = () => {
    if (name === 'PGlite') {
      lite ??= new PGlite()
      return lite
    }
    admin ??= new pg.Pool({ ...pgConfig(), max: 2 })
    return admin
  }
  const db: Database = {
    name,
    async schema(label) {
      const schema = freshSchema(label)
      schemas.push(schema)
      await postgresStore({ client: client(), schema }).migrate()
      return schema
    },
    instance(schema, extra = {}) {
      if (name === 'PGlite') return postgresStore({ client: client(), schema, ...extra })
      const pool = new pg.Pool({ ...pgConfig(), max: 3 })
      pool.on('error', () => {})
      const store = postgresStore({ client: pool, schema, closeClient: true, ...extra })
      stores.push(store)
      return store
    },
    async sql(text, values) {
      const rows =
        name === 'pg' ? (await (client() as pg.Pool).query(text, values)).rows : (await (client() as PGlite).query(text, values)).rows
      return rows as Array<Record<string, unknown>>
    },
    async close() {
      await Promise.all(stores.map((store) => store.close()))
      for (const schema of schemas) await db.sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await admin?.end()
      await lite?.close()
    },
  }
  return db
}
