import { runConformance } from '@tanstack/ai-harness-conformance'
import pg from 'pg'
import { afterAll } from 'vitest'
import { createStore } from './pg-store-factory.js'
import { pgNamespaceData } from './namespace-data.js'
import { pgConfig } from './support.js'

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
  // The store's retries (store.retry.* cases): createStore wraps its pool so appends fail on cue.
  faults: true,
})
