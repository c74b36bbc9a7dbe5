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
  async createStore({ namespace, clock, retry, faults }) {
    // In the suite's retry cases the connection's append statements fail on cue; nothing else changes.
    const client = faults ? failAppendWrites(db, { namespace, clock, retry: retry ?? {}, ...faults }) : db
    const store = postgresStore({ client, schema: schemaFor(namespace), clock, retry })
    await store.migrate()
    return store
  },
  ...pgNamespaceData(db),
  faults: true,
})
