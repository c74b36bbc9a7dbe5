import { runConformance } from '@tanstack/ai-harness-conformance'
import pg from 'pg'
import { afterAll } from 'vitest'
import { postgresStore } from '../src/index.js'
import { pgConfig, schemaFor } from './support.js'

// Dumps and drops schemas; every store the suite opens gets its own pool instead.
const admin = new pg.Pool({ ...pgConfig(), max: 2 })
afterAll(() => admin.end())

runConformance({
  name: 'postgres (pg)',
  async createStore({ namespace, clock }) {
    // Each call is another "process": its own pool, so the race cases race for real.
    const pool = new pg.Pool({ ...pgConfig(), max: 4 })
    pool.on('error', () => {}) // an idle connection dropped by the server; the pool replaces it
    const store = postgresStore({ client: pool, schema: schemaFor(namespace), clock, closeClient: true })
    await store.migrate()
    return store
  },
  dump: ({ namespace }) => postgresStore({ client: admin, schema: schemaFor(namespace) }).dump(),
  cleanup: async ({ namespace }) => void (await admin.query(`DROP SCHEMA IF EXISTS "${schemaFor(namespace)}" CASCADE`)),
  skip: { fencing: 'not yet: the append statement does not check the lease row (in progress on the PostgreSQL store)' },
})
