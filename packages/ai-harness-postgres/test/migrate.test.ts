import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { type PostgresClient, postgresStore } from '../src/index.js'
import { migrations } from '../src/migrations.js'
import { freshSchema, pgConfig } from './support.js'

const admin = new pg.Pool({ ...pgConfig(), max: 2 })
const lite = new PGlite()
const created: string[] = []
const schema = (label: string) => {
  const name = freshSchema(label)
  created.push(name)
  return name
}

afterAll(async () => {
  for (const name of created) await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
  await admin.end()
  await lite.close()
})

const drivers: Array<[string, PostgresClient]> = [
  ['pg', admin],
  ['PGlite', lite],
]

describe.each(drivers)('migrate (%s)', (_, client) => {
  it('applies each step once when run twice', async () => {
    const store = postgresStore({ client, schema: schema('twice') })
    expect(await store.migrate()).toEqual([1, 2, 3])
    expect(await store.migrate()).toEqual([])
    await store.append('s', 1, [{ type: 't' }])
    expect(await store.migrate()).toEqual([])
    expect(await store.read('s')).toHaveLength(1)
  })

  it('keeps two table prefixes in one schema apart', async () => {
    const name = schema('prefixes')
    const a = postgresStore({ client, schema: name, tablePrefix: 'a_' })
    const b = postgresStore({ client, schema: name, tablePrefix: 'b_' })
    await a.migrate()
    await b.migrate()
    await a.append('s', 1, [{ type: 't', from: 'a' }])
    expect(await b.read('s')).toEqual([])
    await b.append('s', 1, [{ type: 't', from: 'b' }])
    expect((await a.read('s')).map((e) => e.record.from)).toEqual(['a'])
  })

  it('says to call migrate() when the tables are missing', async () => {
    const store = postgresStore({ client, schema: schema('missing') })
    await expect(store.append('s', 1, [{ type: 't' }])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    await expect(store.read('s')).rejects.toThrow(/migrate\(\)/)
  })

  it('stores each record as text, byte for byte what JSON.stringify gave', async () => {
    const name = schema('text')
    const store = postgresStore({ client, schema: name })
    await store.migrate()
    const record = { type: 't', nul: 'a\u0000b', z: 1, a: 2, float: 0.1, big: 2 ** 53 }
    await store.append('s', 1, [record])
    expect(await store.dump()).toContain(JSON.stringify(record))
    expect((await store.read('s'))[0]!.record).toEqual(record)
    const column = await client.query(
      "SELECT data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'harness_log_entries' AND column_name = 'record'",
      [name],
    )
    expect(column.rows).toEqual([{ data_type: 'text' }])
  })
})

describe('migrate from several processes at once (pg)', () => {
  it('each of several pools migrating a fresh schema at once succeeds, and the steps apply once', async () => {
    for (let round = 0; round < 3; round++) {
      const name = schema(`race${round}`)
      const pools = Array.from({ length: 4 }, () => new pg.Pool({ ...pgConfig(), max: 1 }))
      try {
        const applied = await Promise.all(pools.map((pool) => postgresStore({ client: pool, schema: name }).migrate()))
        expect(applied.flat()).toEqual([1, 2, 3])
        const { rows } = await admin.query(`SELECT version FROM "${name}"."harness_migrations" ORDER BY version`)
        expect(rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }])
      } finally {
        await Promise.all(pools.map((pool) => pool.end()))
      }
    }
  })
})

describe('configuration', () => {
  it('refuses a schema or table prefix that is not a plain identifier', () => {
    expect(() => postgresStore({ client: lite, schema: 'a"; drop table x; --' })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    )
    expect(() => postgresStore({ client: lite, tablePrefix: 'a-b' })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(() => postgresStore({ client: lite, schema: 'x'.repeat(64) })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
  })

  it('declares its limits, and takes overrides', () => {
    expect(postgresStore({ client: lite }).limits).toEqual({ maxRecordBytes: 256 * 1024, maxBatchBytes: 1024 * 1024, maxLogIdBytes: 2048 })
    expect(postgresStore({ client: lite, limits: { maxRecordBytes: 1000 } }).limits.maxRecordBytes).toBe(1000)
  })
})

/** Every migration the store has: a schema made by none of them lacks them all. */
const ALL_VERSIONS = migrations.map((m) => m.version)

describe.each(drivers)('schemaStatus (%s)', (_, client) => {
  it('says a schema is missing, or which migrations it lacks, and creates nothing', async () => {
    const sql = client as unknown as { query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }> }
    const name = freshSchema('status-missing')
    const missing = postgresStore({ client, schema: name })
    expect(await missing.schemaStatus()).toEqual({ schemaExists: false, pending: ALL_VERSIONS })
    expect((await sql.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [name])).rows).toEqual([])
    const made = schema('status-made')
    await sql.query(`CREATE SCHEMA "${made}"`)
    const empty = postgresStore({ client, schema: made })
    expect(await empty.schemaStatus()).toEqual({ schemaExists: true, pending: ALL_VERSIONS })
    await empty.migrate()
    expect(await empty.schemaStatus()).toEqual({ schemaExists: true, pending: [] })
  })
})
