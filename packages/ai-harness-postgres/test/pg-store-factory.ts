/**
 * The PostgreSQL store on `pg`, for one namespace: the conformance run's `createStore`,
 * and the module each racer process imports (`processes`), so the race cases run their
 * writers in other processes, each with its own pool.
 */
import type { StoreContext } from '@tanstack/ai-harness-conformance'
import pg from 'pg'
import { postgresStore } from '../src/index.js'
import { failAppendWritesOnPool } from './faulty-pg-pool.js'
import { pgConfig, schemaFor } from './support.js'

export async function createStore({ namespace, clock, retry, faults }: StoreContext) {
  const pool = new pg.Pool({ ...pgConfig(), max: 4 })
  pool.on('error', () => {}) // an idle connection dropped by the server (or after an injected lost reply); the pool replaces it
  // In the suite's retry cases the pool's append statements fail on cue; nothing else changes.
  const client = faults ? failAppendWritesOnPool(pool, { namespace, clock, retry: retry ?? {}, ...faults }) : pool
  const store = postgresStore({ client, schema: schemaFor(namespace), clock, retry, closeClient: true })
  await store.migrate()
  return store
}
