/**
 * Liveness on pg, through the fault proxy: a holder reaches PostgreSQL through the proxy
 * (its pool and its liveness connection alike), a peer goes straight. Two faults:
 *
 * - the holder's connections are cut while its process lives: the server frees its lock
 *   at once, the peer takes the session over with a greater fence at once (no expiry),
 *   and everything the old holder still tries (its pool reconnects) is LEASE_LOST;
 * - the holder is blackholed (a partition: nothing gets through, nobody says so): the
 *   peer sees it alive and waits; the holder's heartbeat finds the silence, it counts
 *   itself dead and drops the connection, and only then can the peer take over. Healed,
 *   the old holder writes nothing, though nobody took its lease: it stopped itself.
 *
 * No lease expires in either test (30 s leases, no clock advanced): every takeover here
 * is liveness. Times are real but bounded: the heartbeat is 1 s with a 3 s deadline.
 */
import { type FaultProxy, startFaultProxy } from '@tanstack/ai-harness/testing/node'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { HEARTBEAT_MS, HEARTBEAT_TIMEOUT_MS } from '../src/liveness.js'
import { type PostgresStore, postgresStore } from '../src/index.js'
import { freshSchema, pgConfig } from './support.js'

const TTL = 30_000
const stores: PostgresStore[] = []
let admin: pg.Pool
let proxy: FaultProxy

const open = (schema: string, through?: FaultProxy): PostgresStore => {
  const config = through ? { ...pgConfig(), host: through.host, port: through.port } : pgConfig()
  const pool = new pg.Pool({ ...config, max: 2, connectionTimeoutMillis: 2_000 })
  pool.on('error', () => {})
  const store = postgresStore({ client: pool, schema, closeClient: true, timeoutMs: 2_000, retry: { retries: 1, baseMs: 10 } })
  stores.push(store)
  return store
}

/** Calls `check` until it is true, for at most `ms`; returns the time it took. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now()
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`${what} did not happen within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return performance.now() - started
}

beforeAll(async () => {
  admin = new pg.Pool({ ...pgConfig(), max: 2 })
})
afterEach(async () => {
  await Promise.allSettled(stores.splice(0).map((store) => store.close()))
  await proxy?.close()
})
afterAll(() => admin.end())

async function twoHolders(label: string) {
  const schema = freshSchema(label)
  proxy = await startFaultProxy({ target: { host: String(pgConfig().host), port: Number(pgConfig().port) } })
  const peer = open(schema)
  await peer.migrate()
  const holder = open(schema, proxy)
  const lease = await holder.leases.acquire('s', 'holder', TTL)
  await holder.append('s', 1, [{ type: 'app.first' }], { lease })
  return { schema, peer, holder, lease }
}

describe('liveness on pg, under network faults', () => {
  it('a holder whose connections are cut while its process lives is taken over at once, and its later writes are LEASE_LOST', async () => {
    const { schema, peer, holder, lease } = await twoHolders('live_cut')
    await expect(peer.leases.acquire('s', 'peer', TTL)).rejects.toMatchObject({ code: 'LEASE_HELD' })
    expect(await peer.leases.orphans(10)).toEqual([])

    proxy.resetAll()
    const tookMs = await within(2_000, 'the takeover after the cut', async () => (await peer.leases.orphans(10)).includes('s'))
    const taken = await peer.leases.acquire('s', 'peer', TTL)
    expect(taken.fence).toBeGreaterThan(lease.fence)
    console.log(`liveness: a cut holder was found dead ${tookMs.toFixed(0)} ms after the cut`)

    // The old holder's process lives and its pool reconnects: still, nothing it writes lands.
    await expect(holder.append('s', 2, [{ type: 'app.late' }], { lease })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await expect(holder.leases.renew(lease, TTL)).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await peer.append('s', 2, [{ type: 'app.peer' }], { lease: taken })
    expect((await peer.read('s')).map((e) => e.record.type)).toEqual(['app.first', 'app.peer'])
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
  })

  it('a blackholed holder counts as alive until it drops its own connection; healed, it writes nothing', async () => {
    const { schema, peer, holder, lease } = await twoHolders('live_blackhole')
    proxy.blackholeAll()
    // The server still sees the holder's session: no second driver while the holder may think it drives.
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS / 2))
    await expect(peer.leases.acquire('s', 'peer', TTL)).rejects.toMatchObject({ code: 'LEASE_HELD' })

    // The heartbeat misses its deadline: the holder drops the connection, and the server frees the lock.
    const limit = HEARTBEAT_MS + HEARTBEAT_TIMEOUT_MS + 3_000
    const foundMs = await within(limit, "the holder's own give-up", async () => (await peer.leases.orphans(10)).includes('s'))
    console.log(`liveness: a blackholed holder let go ${foundMs.toFixed(0)} ms after the partition`)

    // Nobody took the lease, yet the healed holder refuses to write with it: it knows it is no longer provably alive.
    proxy.heal()
    await expect(holder.append('s', 2, [{ type: 'app.late' }], { lease })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await expect(holder.leases.renew(lease, TTL)).rejects.toMatchObject({ code: 'LEASE_LOST' })
    expect((await peer.read('s')).map((e) => e.record.type)).toEqual(['app.first'])
    const taken = await peer.leases.acquire('s', 'peer', TTL)
    expect(taken.fence).toBeGreaterThan(lease.fence)
    // A healed holder is a new holder for new leases: it proves itself alive again.
    const fresh = await holder.leases.acquire('t', 'holder', TTL)
    await holder.append('t', 1, [{ type: 'app.again' }], { lease: fresh })
    await expect(peer.leases.acquire('t', 'peer', TTL)).rejects.toMatchObject({ code: 'LEASE_HELD' })
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
  })

  it('a lease taken without liveness (liveness: false) ends only by expiry or release', async () => {
    const schema = freshSchema('live_off')
    const peer = open(schema)
    await peer.migrate()
    const pool = new pg.Pool({ ...pgConfig(), max: 2 })
    const blind = postgresStore({ client: pool, schema, closeClient: true, liveness: false })
    await blind.leases.acquire('s', 'blind', TTL)
    await blind.close()
    expect(await peer.leases.orphans(10)).toEqual([])
    await expect(peer.leases.acquire('s', 'peer', TTL)).rejects.toMatchObject({ code: 'LEASE_HELD' })
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
  })
})
