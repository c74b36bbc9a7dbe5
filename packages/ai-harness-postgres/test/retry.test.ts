import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { isTransientPostgresError, type PGliteLike, type PostgresStoreOptions, postgresStore } from '../src/index.js'
import { type Fault, faultyClient, isAppend, isDeleteLog, pgError } from './faulty-pglite.js'
import { freshSchema, pgConfig } from './support.js'

// The retries every store shares (a transient write retried and landed once, spent retries
// ending in STORE_UNAVAILABLE, a lost reply never written twice) are the suite's cases
// store.retry.*, run on this store by its conformance test; here, what is this store's own.
const db = new PGlite()
afterAll(() => db.close())

/** Fails the first `times` statements that match. */
const failFirst = (times: number, match: (text: string) => boolean, fault: () => Fault) => {
  let left = times
  return (text: string) => (match(text) && left-- > 0 ? fault() : undefined)
}

let schema: string
beforeEach(async () => {
  schema = freshSchema('retry')
  await postgresStore({ client: db, schema }).migrate()
})

function storeOn(client: PGliteLike, retry: PostgresStoreOptions['retry'] = {}) {
  const delays: number[] = []
  const retries: unknown[] = []
  const store = postgresStore({
    client,
    schema,
    retry: { random: () => 0.5, sleep: async (ms) => void delays.push(ms), onRetry: (error) => void retries.push(error), ...retry },
  })
  return { store, delays, retries }
}

describe('transient errors', () => {
  it('retries a transaction whole: a delete cut by a deadlock runs again', async () => {
    const client = faultyClient(
      db,
      failFirst(1, isDeleteLog, () => ({ when: 'before', error: pgError('40P01') })),
    )
    const { store, retries } = storeOn(client)
    await store.append('s', 1, [{ type: 't' }])
    await store.leases.acquire('s', 'host', 1000)
    await store.delete('s')
    expect(retries).toHaveLength(1)
    expect(client.calls.filter(isDeleteLog)).toHaveLength(2)
    expect(await store.read('s')).toEqual([])
    await store.leases.acquire('s', 'someone-else', 1000)
  })
})

describe('errors that are not transient', () => {
  it('never retries a conflict', async () => {
    const client = faultyClient(db, () => undefined)
    const { store, retries } = storeOn(client)
    await store.append('s', 1, [{ type: 't' }])
    client.calls.length = 0
    await expect(store.append('s', 1, [{ type: 't', late: true }])).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 2 })
    expect(client.calls.filter(isAppend)).toHaveLength(1)
    expect(retries).toEqual([])
  })

  it('maps a unique violation of an entry to LOG_CONFLICT without retrying it', async () => {
    const client = faultyClient(
      db,
      failFirst(1, isAppend, () => ({ when: 'before', error: pgError('23505', 'duplicate key value') })),
    )
    const { store, retries } = storeOn(client)
    await expect(store.append('s', 1, [{ type: 't' }])).rejects.toMatchObject({ code: 'LOG_CONFLICT' })
    expect(client.calls.filter(isAppend)).toHaveLength(1)
    expect(retries).toEqual([])
  })

  it('passes any other database error through at once', async () => {
    const client = faultyClient(
      db,
      failFirst(1, isAppend, () => ({ when: 'before', error: pgError('22P02', 'invalid input syntax') })),
    )
    const { store, retries } = storeOn(client)
    await expect(store.append('s', 1, [{ type: 't' }])).rejects.toMatchObject({ code: '22P02' })
    expect(retries).toEqual([])
    expect(await store.read('s')).toEqual([])
  })

  it('refuses a record over the limit before the database sees it', async () => {
    const client = faultyClient(db, () => undefined)
    const store = postgresStore({ client, schema, limits: { maxRecordBytes: 40 } })
    await expect(store.append('s', 1, [{ type: 't', pad: 'x'.repeat(40) }])).rejects.toMatchObject({ code: 'RECORD_TOO_LARGE' })
    expect(client.calls).toEqual([])
  })
})

describe('isTransientPostgresError', () => {
  it.each([
    ['serialization failure', pgError('40001'), true],
    ['deadlock', pgError('40P01'), true],
    ['too many connections', pgError('53300'), true],
    ['admin shutdown', pgError('57P01'), true],
    ['connection failure (class 08)', pgError('08006'), true],
    ['connection reset', pgError('ECONNRESET'), true],
    ['connection refused', pgError('ECONNREFUSED'), true],
    ['pg: connection terminated', new Error('Connection terminated unexpectedly'), true],
    ['pg: pool connect timeout', new Error('timeout exceeded when trying to connect'), true],
    ['unique violation', pgError('23505'), false],
    ['database dropped', pgError('57P04'), false],
    ['undefined table', pgError('42P01'), false],
    ['syntax error', pgError('42601'), false],
    ['a plain error', new Error('boom'), false],
    ['not an error', 'ECONNRESET', false],
  ])('%s → %s', (_, error, transient) => {
    expect(isTransientPostgresError(error)).toBe(transient)
  })
})

describe('a single pg Client', () => {
  it('runs a transaction alone: a query started meanwhile waits until COMMIT', async () => {
    const client = new pg.Client(pgConfig())
    await client.connect()
    const texts: string[] = []
    const named: string[] = []
    const name = freshSchema('client')
    try {
      const store = postgresStore({
        client: {
          query: (query: string | { text: string; name?: string }, values?: unknown[]) => {
            const text = typeof query === 'string' ? query : query.text
            texts.push(text.trim().split(/\s+/)[0]!)
            if (typeof query !== 'string' && query.name) named.push(query.name)
            return client.query(query as string, values)
          },
          end: () => client.end(),
        },
        schema: name,
      })
      await store.migrate()
      await store.append('a', 1, [{ type: 't' }])
      texts.length = 0
      named.length = 0
      await Promise.all([store.delete('a'), store.append('b', 1, [{ type: 't' }]), store.read('b')])
      // The delete's two rounds (the first, then one that finds nothing more), then the others.
      expect(texts).toEqual(['BEGIN', 'WITH', 'WITH', 'COMMIT', 'INSERT', 'SELECT'])
      // Statements with parameters are prepared once per connection (named), not parsed on every step.
      expect(named.length).toBe(4)
      expect(named.every((n) => /^ah_[0-9a-z_]+$/.test(n))).toBe(true)
      expect(await store.read('a')).toEqual([])
      expect(await store.read('b')).toHaveLength(1)
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
      await client.end()
    }
  })
})
