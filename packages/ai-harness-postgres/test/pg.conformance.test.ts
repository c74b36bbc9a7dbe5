import { runConformance } from '@tanstack/ai-harness-conformance'
import pg from 'pg'
import { afterAll } from 'vitest'
import { postgresStore } from '../src/index.js'
import { failAppendWritesOnPool } from './faulty-pg-pool.js'
import { createStore } from './pg-store-factory.js'
import { pgNamespaceData } from './namespace-data.js'
import { pgConfig, schemaFor } from './support.js'

// Dumps and drops schemas; every store the suite opens gets its own pool instead.
const admin = new pg.Pool({ ...pgConfig(), max: 2 })
afterAll(() => admin.end())

runConformance({
  name: 'postgres (pg)',
  // Each call is another "process": its own pool.
  createStore,
  // The race cases run their writers in child processes that open the store with the
  // same factory: real processes, real connections, racing in the database.
  processes: { module: new URL('./pg-store-factory.ts', import.meta.url) },
  ...pgNamespaceData(admin),
  // The store's retries, on a pool whose appends fail on cue (store.retry.* cases).
  faults: {
    async createStore(context) {
      const { namespace, clock, retry } = context
      await createStore(context).then((store) => store.close())
      const pool = new pg.Pool({ ...pgConfig(), max: 2 })
      pool.on('error', () => {}) // a connection the pool dropped after an injected lost reply
      return postgresStore({ client: failAppendWritesOnPool(pool, context), schema: schemaFor(namespace), clock, retry, closeClient: true })
    },
  },
})
