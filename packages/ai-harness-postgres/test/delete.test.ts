import { createManualClock, type Lease } from '@tanstack/ai-harness/store'
import { afterAll, describe, expect, it } from 'vitest'
import type { PostgresStore } from '../src/index.js'
import { gate } from './gate.js'
import { database } from './instances.js'

// Delete holds: once delete resolves, nothing of the old log can come back, from any
// instance; leases after it have greater fences than every lease before; a new log with
// the same id starts clean.

const TTL = 30_000
const seqs = async (store: PostgresStore, id: string) => (await store.read(id)).map((e) => e.seq)

describe.each(['pg', 'PGlite'] as const)('delete while a session is live on several instances (%s)', (name) => {
  const db = database(name)
  afterAll(() => db.close())

  it('every writer of the old log is refused, fences keep growing, and a new log starts clean', async () => {
    const schema = await db.schema('live')
    const clock = createManualClock()
    const [host, other, deleter] = [db.instance(schema, { clock }), db.instance(schema, { clock }), db.instance(schema, { clock })]
    const fences: number[] = []
    let lease: Lease = await host.leases.acquire('s', 'host', TTL)
    fences.push(lease.fence)
    await host.append('s', 1, [{ type: 't', old: 1 }], { lease })
    await host.leases.release(lease)
    lease = await host.leases.acquire('s', 'host', TTL)
    fences.push(lease.fence)
    await host.append(
      's',
      2,
      [
        { type: 't', old: 2 },
        { type: 't', old: 3 },
      ],
      { lease },
    )
    await host.wakeups.schedule('s', clock.now() + 1000)

    await deleter.delete('s')

    // The holder (fenced or not) and another instance that still knows the old next seq.
    for (const records of [
      [{ type: 't', old: 4 }],
      [
        { type: 't', old: 4 },
        { type: 't', old: 5 },
      ],
    ]) {
      await expect(host.append('s', 4, records, { lease })).rejects.toMatchObject({ code: 'LEASE_LOST' })
      await expect(host.append('s', 4, records)).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 1 })
      await expect(other.append('s', 2, records)).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 1 })
    }
    await expect(host.leases.renew(lease, TTL)).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await expect(host.leases.release(lease)).rejects.toMatchObject({ code: 'LEASE_LOST' })
    expect(await other.wakeups.due(10)).toEqual([])
    clock.advance(2000)
    expect(await other.wakeups.due(10)).toEqual([])

    // Anyone may take the session at once, with a fence above every fence before the delete.
    const next = await other.leases.acquire('s', 'other', TTL)
    expect(next.fence).toBeGreaterThan(Math.max(...fences))
    await other.append('s', 1, [{ type: 't', fresh: 1 }], { lease: next })
    expect((await host.read('s')).map((e) => e.record)).toEqual([{ type: 't', fresh: 1 }])
    const dump = await deleter.dump()
    expect(dump).not.toContain('"old"')
  })

  it('fences never repeat for a session id across many deletes', async () => {
    const schema = await db.schema('fences')
    const [a, b] = [db.instance(schema), db.instance(schema)]
    const fences: number[] = []
    for (let i = 0; i < 5; i++) {
      fences.push((await (i % 2 ? a : b).leases.acquire('s', `h${i}`, TTL)).fence)
      await (i % 2 ? b : a).delete('s')
    }
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]!)
  })
})

// Appends in flight while delete runs, forced with a gate (pg only: PGlite runs one
// statement at a time, so nothing can be in flight there).
describe('delete racing an append (pg)', () => {
  const db = database('pg')
  afterAll(() => db.close())

  it.each([
    ['unfenced', false],
    ['fenced', true],
  ])('an %s append in flight either lands before the delete (and is deleted with the log) or is refused', async (_, fenced) => {
    const schema = await db.schema('inflight')
    const [writer, deleter] = [db.instance(schema), db.instance(schema)]
    const lease = await writer.leases.acquire('s', 'host', TTL)
    await writer.append('s', 1, [{ type: 't' }, { type: 't' }])
    const held = await gate(db, schema)
    const appending = writer.append('s', 3, [{ type: 't', gate: true }], fenced ? { lease } : undefined)
    await held.waitUntilStopped()
    const deleting = deleter.delete('s')
    await held.waitUntilBlockedOrDone(deleting)
    await held.open()
    await Promise.allSettled([appending, deleting])
    await deleting
    expect(await seqs(deleter, 's')).toEqual([])
    await expect(writer.append('s', 4, [{ type: 't' }])).rejects.toMatchObject({ code: 'LOG_CONFLICT' })
  })

  it('writers appending as fast as they can from several instances never bring a deleted log back', async () => {
    const schema = await db.schema('chase')
    const writers = Array.from({ length: 4 }, () => db.instance(schema))
    const deleter = db.instance(schema)
    for (let round = 0; round < 15; round++) {
      const id = `s${round}`
      await deleter.append(id, 1, [{ type: 't' }])
      let deleted = false
      // Each writer appends after the last entry it reads; it never starts a log (seq 1).
      const write = async (store: PostgresStore) => {
        for (let i = 0; i < 200; i++) {
          const last = (await store.read(id)).at(-1)?.seq
          if (last === undefined) return
          await store.append(id, last + 1, [{ type: 't', late: deleted }]).catch((error: { code?: string }) => {
            if (error.code !== 'LOG_CONFLICT') throw error
          })
        }
      }
      const writing = Promise.all(writers.map(write))
      await deleter.read(id) // let the writers get going
      await deleter.delete(id)
      deleted = true
      expect(await seqs(deleter, id), `round ${round}: right after delete`).toEqual([])
      await writing
      expect(await seqs(deleter, id), `round ${round}: after the writers stopped`).toEqual([])
    }
  })
})
