import { createManualClock, type Lease } from '@tanstack/ai-harness/store'
import { afterAll, describe, expect, it } from 'vitest'
import { database } from './instances.js'
import { layoutV1 } from './layout-v1.js'
import { freshSchema } from './support.js'

// migrate() moves a database that version 1 of this store (head rows) created and wrote
// to the one-row layout, keeping every log, lease and wakeup, and every guarantee.

const TTL = 30_000

describe.each(['pg', 'PGlite'] as const)('migrate from the head-row layout (%s)', (name) => {
  const db = database(name)
  const dropped: string[] = []
  afterAll(async () => {
    for (const schema of dropped) await db.sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await db.close()
  })

  it('keeps logs, held leases and wakeups; appends, conflicts and fences go on from where version 1 left them', async () => {
    const schema = freshSchema('v1')
    dropped.push(schema)
    const clock = createManualClock()
    const v1 = layoutV1(schema)
    for (const statement of v1.ddl) await db.sql(statement)
    const text = (tag: string, i: number) => JSON.stringify({ type: 't', tag, i })
    await db.sql(v1.appendFirst, ['a', [text('a', 1), text('a', 2)]])
    await db.sql(v1.appendNext, ['a', 3, [text('a', 3), text('a', 4), text('a', 5)]])
    await db.sql(v1.appendFirst, ['b', [text('b', 1)]])
    const now = clock.now()
    for (let i = 0; i < 3; i++) await db.sql(v1.acquireLease, ['a', 'host-a', now, TTL]) // fence 3, held
    const [bLease] = await db.sql(v1.acquireLease, ['b', 'host-b', now, TTL])
    await db.sql(v1.releaseLease, ['b', 'host-b', bLease!.fence]) // fence 1, released
    for (let i = 0; i < 7; i++) await db.sql(v1.acquireLease, ['c', 'host-c', now, TTL]) // fence 7, held
    await db.sql(v1.scheduleWakeup, ['a', now - 5])

    const store = db.instance(schema, { clock })
    expect(await store.migrate()).toEqual([2, 3])
    expect(await store.migrate()).toEqual([])

    // Every entry is where it was; the head rows are gone, and so is the released lease's row.
    expect((await store.read('a')).map((e) => `${e.seq}:${e.record.tag}${e.record.i}`)).toEqual(['1:a1', '2:a2', '3:a3', '4:a4', '5:a5'])
    expect(await db.sql(`SELECT to_regclass('"${schema}".harness_logs') AS logs`)).toEqual([{ logs: null }])
    expect((await db.sql(`SELECT log_id FROM "${schema}".harness_leases ORDER BY log_id`)).map((r) => r.log_id)).toEqual(['a', 'c'])
    expect(await store.wakeups.due(10)).toEqual([{ logId: 'a', at: now - 5 }])

    // The log's compare-and-set works on the migrated data.
    await expect(store.append('a', 3, [{ type: 't' }])).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 6 })
    await expect(store.append('a', 8, [{ type: 't' }])).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 6 })
    await expect(store.append('b', 1, [{ type: 't' }])).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 2 })

    // The lease version 1 handed to host-a still holds, fences and all.
    const held: Lease = { logId: 'a', owner: 'host-a', fence: 3, expiresAt: now + TTL }
    await expect(store.leases.acquire('a', 'host-x', TTL)).rejects.toMatchObject({ code: 'LEASE_HELD' })
    expect(await store.append('a', 6, [{ type: 't', tag: 'a', i: 6 }], { lease: held })).toEqual({ nextSeq: 7 })
    await store.leases.release(held)
    // New leases supersede every lease version 1 handed out, of any session.
    const fences = [await store.leases.acquire('a', 'host-x', TTL), await store.leases.acquire('b', 'host-x', TTL)].map((l) => l.fence)
    for (const fence of fences) expect(fence).toBeGreaterThan(7)
    await expect(store.append('a', 7, [{ type: 't' }], { lease: held })).rejects.toMatchObject({ code: 'LEASE_LOST' })
  })
})
