import { PGlite } from '@electric-sql/pglite'
import { runConformance } from '@tanstack/ai-harness-conformance'
import { afterAll } from 'vitest'
import { postgresStore } from '../src/index.js'
import { schemaFor } from './support.js'

// PGlite is one connection in this process. Every store instance shares it (the
// race cases still run, serialized by PGlite), and each namespace has its own schema.
// One instance for the file: starting PGlite takes about two seconds.
const db = new PGlite()
afterAll(() => db.close())

runConformance({
  name: 'postgres (PGlite)',
  async createStore({ namespace, clock }) {
    const store = postgresStore({ client: db, schema: schemaFor(namespace), clock })
    await store.migrate()
    return store
  },
  dump: ({ namespace }) => postgresStore({ client: db, schema: schemaFor(namespace) }).dump(),
  cleanup: async ({ namespace }) => void (await db.query(`DROP SCHEMA IF EXISTS "${schemaFor(namespace)}" CASCADE`)),
  skip: { fencing: 'not yet: the append statement does not check the lease row (in progress on the PostgreSQL store)' },
})
