import { createManualClock } from '@tanstack/ai-harness/testing'
import { type FaultProxy, networkFaultScenarios, startFaultProxy } from '@tanstack/ai-harness/testing/node'
import pg from 'pg'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { postgresStore } from '../src/index.js'
import { freshSchema, pgConfig } from './support.js'

// The runtime against PostgreSQL through a TCP proxy that cuts, resets and blackholes
// connections (the shared network fault scenarios). pg has no deadline of its own here, as in
// the README's plain pool: the runtime's deadlines must end every wait.
const schema = freshSchema('netfaults')
const admin = new pg.Pool({ ...pgConfig(), max: 2 })
const pools: pg.Pool[] = []
let proxy: FaultProxy
const clock = createManualClock()

beforeAll(async () => {
  proxy = await startFaultProxy({ target: { host: pgConfig().host, port: pgConfig().port! } })
  await postgresStore({ client: admin, schema }).migrate()
})
afterAll(async () => {
  await proxy.close()
  await Promise.all(pools.map((pool) => pool.end().catch(() => {})))
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

function storeOn(config: pg.PoolConfig) {
  const pool = new pg.Pool({ ...pgConfig(), ...config, max: 4 })
  pool.on('error', () => {}) // a connection the proxy reset; the pool replaces it
  pools.push(pool)
  return postgresStore({ client: pool, schema, clock, retry: { baseMs: 5, maxMs: 50 } })
}

describe('the runtime on PostgreSQL through a faulty network', () => {
  for (const scenario of networkFaultScenarios) {
    it(scenario.name, () =>
      scenario.run({
        proxy,
        clock,
        openStore: async () => storeOn({ host: proxy.host, port: proxy.port }),
        openDirectStore: async () => storeOn({}),
      }),
    )
  }
})
