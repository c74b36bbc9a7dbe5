import { createManualClock, WAITING_FOR_PERSON } from '@tanstack/ai-harness/store'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type PostgresStore, postgresStore } from '../src/index.js'
import { statements, tableNames } from '../src/sql.js'
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
  // The first lease of an instance also takes its liveness lock (one statement, once): paid here.
  await store.leases.acquire('warm-up', 'a', 1000)
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

it('lists sessions in one round trip a page, by index probes, never a scan of the entries', async () => {
  // 40 logs of 50 records: a scan would read 2 000 rows for a page of 3 ids.
  for (let i = 0; i < 40; i++) {
    await store.append(
      `list-${String(i).padStart(2, '0')}`,
      1,
      Array.from({ length: 50 }, (_, n) => ({ type: 't', n })),
    )
  }
  await store.wakeups.schedule('list-07', WAITING_FOR_PERSON)
  await connection.query(`ANALYZE "${schema}"."harness_log_entries"`)
  await connection.query(`ANALYZE "${schema}"."harness_wakeups"`)
  expect(await roundTrips(() => store.sessions.list({ after: 'list-04', limit: 3 }))).toBe(1)
  expect(await store.sessions.list({ after: 'list-04', limit: 3 })).toEqual(['list-05', 'list-06', 'list-07'])
  expect(await roundTrips(() => store.sessions.waiting({ limit: 3 }))).toBe(1)
  expect(await store.sessions.waiting({ limit: 3 })).toEqual(['list-07'])
  const sql = statements(tableNames(schema, 'harness_'))
  const listPlan = (await connection.query(`EXPLAIN (COSTS OFF) ${sql.listSessions}`, ['list-04', 3])).rows
    .map((row) => String(row['QUERY PLAN']))
    .join('\n')
  expect(listPlan).not.toMatch(/Seq Scan/)
  expect(listPlan).toMatch(/Index (Only )?Scan using \S*log_entries_pkey/)
})
