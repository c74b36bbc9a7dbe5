import { createManualClock } from '@tanstack/ai-harness'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type PostgresStore, postgresStore } from '../src/index.js'
import { freshSchema, pgConfig } from './support.js'

// The README's cost table, measured: on a pg Client each query call is one round trip.
const connection = new pg.Client(pgConfig())
const schema = freshSchema('cost')
const sent: string[] = []
let store: PostgresStore
const clock = createManualClock()

beforeAll(async () => {
  await connection.connect()
  store = postgresStore({
    client: {
      query: (text: string, values?: unknown[]) => {
        sent.push(text)
        return connection.query(text, values)
      },
      end: () => connection.end(),
    },
    schema,
    clock,
  })
  await store.migrate()
})

afterAll(async () => {
  await connection.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await connection.end()
})

const roundTrips = async (work: () => Promise<unknown>) => {
  sent.length = 0
  await work().catch(() => undefined)
  return sent.length
}

it('costs the round trips the README states', async () => {
  const batch = Array.from({ length: 5 }, (_, i) => ({ type: 't', i }))
  expect(await roundTrips(() => store.append('s', 1, batch))).toBe(1)
  expect(await roundTrips(() => store.append('s', 6, batch))).toBe(1)
  expect(await roundTrips(() => store.append('s', 6, batch))).toBe(2) // conflict: + the next seq
  expect(await roundTrips(() => store.read('s', { after: 3, limit: 4 }))).toBe(1)
  expect(await roundTrips(() => store.leases.acquire('s', 'a', 1000))).toBe(1)
  expect(await roundTrips(() => store.leases.acquire('s', 'b', 1000))).toBe(2) // held: + its expiry
  const lease = await store.leases.acquire('s', 'a', 1000)
  expect(await roundTrips(() => store.leases.renew(lease, 1000))).toBe(1)
  expect(await roundTrips(() => store.leases.release(lease))).toBe(1)
  expect(await roundTrips(() => store.wakeups.schedule('s', clock.now()))).toBe(1)
  expect(await roundTrips(() => store.wakeups.due(10))).toBe(1)
  expect(await roundTrips(() => store.wakeups.claim(10, 1000))).toBe(1)
  expect(await roundTrips(() => store.wakeups.cancel('s'))).toBe(1)
  expect(await roundTrips(() => store.delete('s'))).toBe(4) // BEGIN, lease + wakeup + entries, entries again (none left), COMMIT
  expect(await roundTrips(() => store.migrate())).toBe(6) // BEGIN, lock, schema?, bookkeeping table, versions, COMMIT
})
