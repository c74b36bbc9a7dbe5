import { PGlite } from '@electric-sql/pglite'
import { runConformance } from '@tanstack/ai-harness-conformance'
import { afterAll } from 'vitest'
import { postgresStore } from '../src/index.js'
import { failAppendWrites } from './faulty-pglite.js'
import { pgNamespaceData } from './namespace-data.js'
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
  ...pgNamespaceData(db),
  faults: {
    async createStore(context) {
      const { namespace, clock, retry } = context
      await postgresStore({ client: db, schema: schemaFor(namespace) }).migrate()
      return postgresStore({ client: failAppendWrites(db, context), schema: schemaFor(namespace), clock, retry })
    },
  },
})
