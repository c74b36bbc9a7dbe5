/**
 * The PostgreSQL store on `pg`, for one namespace: the conformance run's `createStore`,
 * and the module each racer process imports (`processes`), so the race cases run their
 * writers in other processes, each with its own pool.
 */
import type { StoreContext } from '@tanstack/ai-harness-conformance'
import pg from 'pg'
import { postgresStore } from '../src/index.js'
import { pgConfig, schemaFor } from './support.js'

export async function createStore({ namespace, clock }: StoreContext) {
  const pool = new pg.Pool({ ...pgConfig(), max: 4 })
  pool.on('error', () => {}) // an idle connection dropped by the server; the pool replaces it
  const store = postgresStore({ client: pool, schema: schemaFor(namespace), clock, closeClient: true })
  await store.migrate()
  return store
}
