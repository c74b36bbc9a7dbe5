import { resolve } from 'node:path'
import type { HarnessStore } from '@tanstack/ai-harness'
import type { PostgresStore } from '@tanstack/ai-harness-postgres'

export interface OpenedStore {
  store: HarnessStore
  close(): Promise<void>
}

/**
 * Opens the store a URL names, read-only in what it creates: the inspector never migrates.
 * A PostgreSQL schema that is missing (a typo in `?schema=`) or has no harness tables is
 * refused with what to do, and nothing is created in it.
 */
export async function openStore(url: string): Promise<OpenedStore> {
  if (url.startsWith('pglite:')) {
    const [{ PGlite }, { postgresStore }] = await Promise.all([import('@electric-sql/pglite'), import('@tanstack/ai-harness-postgres')])
    return ready(postgresStore({ client: new PGlite(resolve(url.slice('pglite:'.length))), closeClient: true }), 'public')
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const [{ default: pg }, { postgresStore }] = await Promise.all([import('pg'), import('@tanstack/ai-harness-postgres')])
    const parsed = new URL(url)
    const schema = parsed.searchParams.get('schema') ?? 'public'
    parsed.searchParams.delete('schema')
    const pool = new pg.Pool({ connectionString: parsed.toString(), max: 4 })
    pool.on('error', () => {})
    return ready(postgresStore({ client: pool, closeClient: true, schema }), schema)
  }
  if (url === 'memory:') {
    const { memoryStore } = await import('@tanstack/ai-harness-memory')
    return { store: memoryStore(), close: async () => {} }
  }
  throw new Error(`Unknown store ${JSON.stringify(url)}: use pglite:<folder>, postgres://… or memory:.`)
}

async function ready(store: PostgresStore, schema: string): Promise<OpenedStore> {
  try {
    const status = await store.schemaStatus()
    if (!status.schemaExists) {
      throw new Error(
        `there is no schema ${JSON.stringify(schema)} in that database (a typo in ?schema=?). The inspector creates nothing: name the schema your app uses.`,
      )
    }
    if (status.pending.length > 0) {
      throw new Error(
        `schema ${JSON.stringify(schema)} has no harness tables, or older ones (migrations ${status.pending.join(', ')} are not applied). The inspector creates nothing: run your app (store.migrate()) first, or name the schema it uses.`,
      )
    }
  } catch (error) {
    await store.close().catch(() => {})
    throw error
  }
  return { store, close: () => store.close() }
}
