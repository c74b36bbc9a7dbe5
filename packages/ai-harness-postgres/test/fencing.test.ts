import { createManualClock, type Lease } from '@tanstack/ai-harness/store'
import { afterAll, describe, expect, it } from 'vitest'
import type { PostgresStore } from '../src/index.js'
import { gate } from './gate.js'
import { database } from './instances.js'

// Fenced appends: an append that carries a lease lands only while that lease is the
// session's current one, checked in the same statement as the seq.

const TTL = 30_000
const records = (tag: string, n = 1) => Array.from({ length: n }, (_, i) => ({ type: 't', tag, i }))
const tags = async (store: PostgresStore, id: string) => (await store.read(id)).map((e) => `${e.record.tag}${e.record.i}`)

describe.each(['pg', 'PGlite'] as const)('fenced appends (%s)', (name) => {
  const db = database(name)
  afterAll(() => db.close())
  const two = async (label: string) => {
    const schema = await db.schema(label)
    const clock = createManualClock()
    return { schema, clock, a: db.instance(schema, { clock }), b: db.instance(schema, { clock }) }
  }

  it("lands with the session's current lease, one record or many; without a lease it is unfenced", async () => {
    const { a, b } = await two('current')
    const lease = await a.leases.acquire('s', 'host-a', TTL)
    expect(await a.append('s', 1, records('one'), { lease })).toEqual({ nextSeq: 2 })
    expect(await b.append('s', 2, records('many', 3), { lease })).toEqual({ nextSeq: 5 })
    expect(await b.append('s', 5, records('plain'))).toEqual({ nextSeq: 6 })
    expect(await tags(a, 's')).toEqual(['one0', 'many0', 'many1', 'many2', 'plain0'])
  })

  it('refuses a superseded lease with LEASE_LOST and writes nothing, one record or many', async () => {
    const { a, b, clock, schema } = await two('superseded')
    const old = await a.leases.acquire('s', 'host-a', TTL)
    await a.append('s', 1, records('a'), { lease: old })
    clock.advance(TTL)
    const current = await b.leases.acquire('s', 'host-b', TTL)
    for (const batch of [records('late'), records('late', 3)]) {
      await expect(a.append('s', 2, batch, { lease: old })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    }
    await b.append('s', 2, records('b'), { lease: current })
    expect(await tags(a, 's')).toEqual(['a0', 'b0'])
    expect(await db.sql(`SELECT 1 FROM "${schema}".harness_log_entries WHERE record LIKE '%late%'`)).toEqual([])
  })

  it('refuses a released lease, a lease ended by delete, and a lease of another session', async () => {
    const { a, b } = await two('ended')
    const released = await a.leases.acquire('s', 'host-a', TTL)
    await a.leases.release(released)
    await expect(a.append('s', 1, records('x'), { lease: released })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    const deleted = await a.leases.acquire('s', 'host-a', TTL)
    await a.append('s', 1, records('a'), { lease: deleted })
    await b.delete('s')
    await expect(a.append('s', 2, records('x'), { lease: deleted })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await expect(a.append('s', 1, records('x'), { lease: deleted })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    const other = await b.leases.acquire('t', 'host-a', TTL)
    await expect(a.append('s', 1, records('x'), { lease: { ...other, logId: 's' } })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    expect(await a.read('s')).toEqual([])
  })

  it('reports LEASE_LOST before a seq conflict, and LOG_CONFLICT when only the seq is wrong', async () => {
    const { a, b, clock } = await two('order')
    const old = await a.leases.acquire('s', 'host-a', TTL)
    await a.append('s', 1, records('a', 2), { lease: old })
    await expect(a.append('s', 2, records('x'), { lease: old })).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 3 })
    await expect(a.append('s', 9, records('x'), { lease: old })).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 3 })
    clock.advance(TTL)
    await b.leases.acquire('s', 'host-b', TTL)
    for (const seq of [1, 2, 3, 9]) {
      await expect(a.append('s', seq, records('x'), { lease: old })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    }
  })

  it('lets an expired lease that nobody took over write (the seq still guards the log)', async () => {
    const { a, clock } = await two('expired')
    const lease = await a.leases.acquire('s', 'host-a', TTL)
    clock.advance(TTL * 3)
    await a.append('s', 1, records('a'), { lease })
    expect(await tags(a, 's')).toEqual(['a0'])
  })

  it('refuses a lease that is not a lease with INVALID_ARGUMENT', async () => {
    const { a } = await two('malformed')
    for (const lease of [{ logId: 's', owner: '', fence: 1 }, { logId: 's', owner: 'h', fence: 0.5 }, { owner: 'h', fence: 1 }, 'lease']) {
      await expect(a.append('s', 1, records('x'), { lease: lease as unknown as Lease })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
  })
})

// Interleavings forced with a gate: the append stops inside its INSERT (after its checks,
// holding its locks) until the test opens the gate. pg only: PGlite runs one statement at a time.
describe('a fenced append in flight (pg)', () => {
  const db = database('pg')
  afterAll(() => db.close())

  it('a new lease waits for it: after acquire returns, the new holder reads every append of the old holder that landed', async () => {
    const schema = await db.schema('acquire_race')
    const clock = createManualClock()
    const [a, b] = [db.instance(schema, { clock }), db.instance(schema, { clock })]
    const old = await a.leases.acquire('s', 'host-a', TTL)
    const held = await gate(db, schema)
    const appending = a.append('s', 1, [{ type: 't', gate: true }], { lease: old })
    await held.waitUntilStopped()
    clock.advance(TTL)
    const acquiring = b.leases.acquire('s', 'host-b', TTL).then(async (lease) => ({ lease, seen: await b.read('s') }))
    await held.waitUntilBlockedOrDone(acquiring)
    await held.open()
    const [appended, acquired] = await Promise.allSettled([appending, acquiring])
    expect(appended.status).toBe('fulfilled')
    expect(acquired.status === 'fulfilled' && acquired.value.seen.map((e) => e.seq)).toEqual([1])
  })
})

// The same interleaving for a fenced append inside a group (group commit): the group's
// statement locks each fenced append's lease row as the single statement does.
describe('a fenced append in flight inside a group (pg)', () => {
  const db = database('pg')
  afterAll(() => db.close())

  it('a new lease waits for the group: after acquire returns, the new holder reads the old holder’s grouped append', async () => {
    const schema = await db.schema('group_acquire_race')
    const clock = createManualClock()
    const [a, b] = [db.instance(schema, { clock }), db.instance(schema, { clock })]
    const old = await a.leases.acquire('s', 'host-a', TTL)
    const held = await gate(db, schema)
    // Two appends take the round trips a pool sends at once; the fenced one and "t" go out as one group.
    const fillers = ['f1', 'f2'].map((id) => a.append(id, 1, records(id)))
    const appending = a.append('s', 1, [{ type: 't', gate: true }], { lease: old })
    const other = a.append('t', 1, records('t'))
    await held.waitUntilStopped()
    const grouped = await db.sql(
      "SELECT 1 FROM pg_stat_activity WHERE query LIKE '%unnest($1::text[], $2::bigint[]%' AND wait_event_type = 'Lock'",
    )
    expect(grouped).toHaveLength(1)
    clock.advance(TTL)
    const acquiring = b.leases.acquire('s', 'host-b', TTL).then(async (lease) => ({ lease, seen: await b.read('s') }))
    await held.waitUntilBlockedOrDone(acquiring)
    await held.open()
    const [appended, acquired] = await Promise.allSettled([appending, acquiring, other, ...fillers])
    expect(appended.status).toBe('fulfilled')
    expect(acquired.status === 'fulfilled' && acquired.value.seen.map((e) => e.seq)).toEqual([1])
  })
})
