import { createManualClock } from '@tanstack/ai-harness/store'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type PostgresStore, postgresStore } from '../src/index.js'
import { type FaultProxy, startFaultProxy } from './fault-proxy.js'
import { freshSchema, pgConfig } from './support.js'

// A store call that gets no answer (a half-open connection, a server that vanished) ends
// at its deadline, is retried, and then fails with STORE_UNAVAILABLE; an append whose
// reply was lost never lands twice. Through a loopback proxy that blackholes or drops replies.

const TIMEOUT_MS = 300
const admin = new pg.Pool({ ...pgConfig(), max: 1 })
const schema = freshSchema('deadline')
let proxy: FaultProxy
let pool: pg.Pool
let retries: number
let onRetry: () => void
let store: PostgresStore

beforeAll(async () => {
  await postgresStore({ client: admin, schema }).migrate()
})
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

/**
 * A store on a pool through the proxy. Without `connectionTimeoutMillis` (pg's default) a
 * pool keeps a connection attempt that gets no answer forever: the store's deadline still
 * ends each call, but the pool only recovers its slots with it, as the README advises.
 */
function storeThroughProxy(pool: pg.Pool): PostgresStore {
  pool.on('error', () => {}) // connections the proxy cuts
  return postgresStore({
    client: pool,
    schema,
    clock: createManualClock(),
    timeoutMs: TIMEOUT_MS,
    retry: {
      retries: 2,
      baseMs: 1,
      onRetry: () => {
        retries++
        onRetry()
      },
    },
  })
}

beforeEach(async () => {
  proxy = await startFaultProxy({ host: String(pgConfig().host), port: Number(pgConfig().port) })
  pool = new pg.Pool({ ...pgConfig(), host: '127.0.0.1', port: proxy.port, max: 2 })
  store = storeThroughProxy(pool)
  retries = 0
  onRetry = () => {}
})
afterEach(async () => {
  await proxy.close()
  await pool.end()
})

const log = () => `s-${Math.random().toString(36).slice(2)}`
const direct = () => postgresStore({ client: admin, schema })

// Bounded: without deadlines these calls hang, and each test fails at its timeout.
describe('a store call that never gets an answer', { timeout: 20_000 }, () => {
  it('ends at its deadline on an open connection: retried, then STORE_UNAVAILABLE, and the pool recovers', async () => {
    await pool.end()
    pool = new pg.Pool({ ...pgConfig(), host: '127.0.0.1', port: proxy.port, max: 2, connectionTimeoutMillis: TIMEOUT_MS })
    store = storeThroughProxy(pool)
    const id = log()
    await store.append(id, 1, [{ type: 't', n: 1 }]) // a pooled connection, open through the proxy
    proxy.mode = 'blackhole'
    const error = await store.append(id, 2, [{ type: 't', n: 2 }]).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect(retries).toBe(2)
    proxy.mode = 'pass'
    // The blackholed connections were dropped; new ones work.
    expect((await store.read(id)).map((e) => e.record.n)).toEqual([1])
    await store.append(id, 2, [{ type: 't', n: 2 }])
    expect((await direct().read(id)).map((e) => e.record.n)).toEqual([1, 2])
  })

  it('ends at its deadline while connecting (the server never answers the handshake)', async () => {
    proxy.mode = 'blackhole'
    for (const call of [
      () => store.read(log()),
      () => store.leases.acquire(log(), 'host', 1000),
      () => store.wakeups.due(10),
      () => store.delete(log()),
    ]) {
      retries = 0
      await expect(call()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
      expect(retries).toBe(2)
    }
  })

  it('closing the store (closeClient) while connection attempts hang ends at its deadline too', async () => {
    const closing = postgresStore({ client: pool, schema, timeoutMs: TIMEOUT_MS, retry: { retries: 1, baseMs: 1 }, closeClient: true })
    await closing.read(log())
    proxy.mode = 'blackhole'
    await expect(closing.read(log())).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' }) // leaves a connection attempt hanging
    await expect(closing.close()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    pool = new pg.Pool() // afterEach ends this one instead; the first was ended by close()
  })

  it('a renewal past its deadline fails instead of hanging, so the holder learns it may have lost the lease', async () => {
    const id = log()
    const lease = await store.leases.acquire(id, 'host', 10_000)
    proxy.mode = 'blackhole'
    await expect(store.leases.renew(lease, 10_000)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
  })
})

describe('an append whose reply is lost', { timeout: 20_000 }, () => {
  it('is retried after its deadline, meets its own landed batch, and never lands twice', async () => {
    const id = log()
    await store.append(id, 1, [{ type: 't', n: 1 }])
    proxy.mode = 'drop-replies'
    onRetry = () => {
      proxy.mode = 'pass' // the network is back for the retry
    }
    const batch = [
      { type: 't', n: 2 },
      { type: 't', n: 3 },
    ]
    const error = await store.append(id, 2, batch).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 4 })
    expect(retries).toBe(1)
    expect((await direct().read(id)).map((e) => e.record.n)).toEqual([1, 2, 3])
  })

  it('with no answer at all: STORE_UNAVAILABLE, the batch landed once, and a later append at its seq conflicts', async () => {
    const id = log()
    await store.read(id) // a pooled connection, open through the proxy: the append reaches the server
    proxy.mode = 'drop-replies'
    await expect(store.append(id, 1, [{ type: 't', n: 1 }])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
    expect(retries).toBe(2) // the retries found no connection that answers: they never reached the server
    proxy.mode = 'pass'
    expect((await direct().read(id)).map((e) => e.record.n)).toEqual([1])
    await expect(direct().append(id, 1, [{ type: 't', n: 1 }])).rejects.toMatchObject({ code: 'LOG_CONFLICT' })
  })
})

describe('timeoutMs', () => {
  it('is checked: a number of ms > 0', () => {
    for (const timeoutMs of [0, -1, Number.NaN, '100', 2 ** 31]) {
      expect(() => postgresStore({ client: admin, timeoutMs: timeoutMs as number })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('timeoutMs') }),
      )
    }
  })
})
