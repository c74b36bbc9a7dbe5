import { createManualClock, type Lease, MAX_TIME_MS } from '@tanstack/ai-harness/store'
import { createMemoryData, dumpMemoryData, MEMORY_MAX_LOG_ID_BYTES, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'

// What the memory store adds to the conformance suite's cases: fenced appends, a delete
// that holds across instances, fences that never repeat, its clock, and checked options.

const TTL = 30_000

/** Several instances on one data set: several "processes" on one database. */
function instances(count = 3) {
  const data = createMemoryData()
  const clock = createManualClock()
  return { data, clock, stores: Array.from({ length: count }, () => memoryStore({ data, clock })) }
}

describe('fenced appends', () => {
  it("land with the session's current lease; a superseded, released or deleted lease is LEASE_LOST and writes nothing", async () => {
    const { clock, data, stores } = instances()
    const [a, b, c] = stores as [ReturnType<typeof memoryStore>, ReturnType<typeof memoryStore>, ReturnType<typeof memoryStore>]
    const old = await a.leases.acquire('s', 'host-a', TTL)
    await a.append('s', 1, [{ type: 't', n: 1 }], { lease: old })
    clock.advance(TTL * 2)
    await a.append('s', 2, [{ type: 't', n: 2 }], { lease: old }) // expired, nobody took it: the seq still guards
    const current = await b.leases.acquire('s', 'host-b', TTL)
    await expect(a.append('s', 3, [{ type: 't', late: true }], { lease: old })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await expect(a.append('s', 1, [{ type: 't', late: true }], { lease: old })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await expect(b.append('s', 2, [{ type: 't' }], { lease: current })).rejects.toMatchObject({ code: 'LOG_CONFLICT' })
    await b.append('s', 3, [{ type: 't', n: 3 }], { lease: current })
    await b.leases.release(current)
    await expect(b.append('s', 4, [{ type: 't', late: true }], { lease: current })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    const last = await c.leases.acquire('s', 'host-c', TTL)
    await c.delete('s')
    await expect(c.append('s', 1, [{ type: 't', late: true }], { lease: last })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    const other = await c.leases.acquire('t', 'host-c', TTL)
    await expect(c.append('s', 1, [{ type: 't', late: true }], { lease: { ...other, logId: 's' } })).rejects.toMatchObject({
      code: 'LEASE_LOST',
    })
    expect(dumpMemoryData(data)).not.toContain('late')
  })

  it('refuse a lease that is not a lease with INVALID_ARGUMENT', async () => {
    const store = memoryStore()
    for (const lease of [{ logId: 's', owner: '', fence: 1 }, { logId: 's', owner: 'h', fence: 0 }, { owner: 'h', fence: 1 }, 5]) {
      await expect(store.append('s', 1, [{ type: 't' }], { lease: lease as unknown as Lease })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      })
    }
  })
})

describe('delete while a session is live on several instances', () => {
  it('refuses every writer of the old log, keeps fences growing, and lets a new log start clean', async () => {
    const { data, stores } = instances()
    const [host, other, deleter] = stores as [
      ReturnType<typeof memoryStore>,
      ReturnType<typeof memoryStore>,
      ReturnType<typeof memoryStore>,
    ]
    const lease = await host.leases.acquire('s', 'host', TTL)
    await host.append('s', 1, [{ type: 't', old: 1 }], { lease })
    await host.append('s', 2, [{ type: 't', old: 2 }])
    await host.wakeups.schedule('s', 0)
    await deleter.delete('s')
    await expect(host.append('s', 3, [{ type: 't', old: 3 }], { lease })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    await expect(host.append('s', 3, [{ type: 't', old: 3 }])).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 1 })
    await expect(other.append('s', 2, [{ type: 't', old: 3 }])).rejects.toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 1 })
    await expect(host.leases.renew(lease, TTL)).rejects.toMatchObject({ code: 'LEASE_LOST' })
    expect(await other.wakeups.due(10)).toEqual([])
    const next = await other.leases.acquire('s', 'other', TTL)
    expect(next.fence).toBeGreaterThan(lease.fence)
    await other.append('s', 1, [{ type: 't', fresh: true }], { lease: next })
    expect((await host.read('s')).map((e) => e.record)).toEqual([{ type: 't', fresh: true }])
    expect(dumpMemoryData(data)).not.toContain('old')
  })

  it('never repeats a fence for a session id, across release and delete, and release leaves nothing behind', async () => {
    const { data, stores } = instances(2)
    const fences: number[] = []
    for (let i = 0; i < 6; i++) {
      const lease = await stores[i % 2]!.leases.acquire('s', `h${i}`, TTL)
      fences.push(lease.fence)
      if (i % 2) await stores[0]!.delete('s')
      else await stores[1]!.leases.release(lease)
      expect(dumpMemoryData(data)).not.toContain('"s"')
    }
    for (let i = 1; i < fences.length; i++) expect(fences[i]).toBeGreaterThan(fences[i - 1]!)
  })
})

describe('wakeups', () => {
  it('due at the same time come out in code point order (UTF-8 byte order, as PostgreSQL\'s COLLATE "C")', async () => {
    const store = memoryStore({ clock: createManualClock(1000) })
    const ids = ['\u{10000}', '\uffff', 'b', 'é', 'a', 'ab']
    for (const id of ids) await store.wakeups.schedule(id, 5)
    expect((await store.wakeups.due(10)).map((w) => w.logId)).toEqual(['a', 'ab', 'b', 'é', '\uffff', '\u{10000}'])
  })
})

describe('clock', () => {
  it('now() is the injected clock, or the system clock', async () => {
    const clock = createManualClock(123_456)
    expect(await memoryStore({ clock }).now()).toBe(123_456)
    const before = Date.now()
    const now = await memoryStore().now()
    expect(now).toBeGreaterThanOrEqual(before)
    expect(now).toBeLessThanOrEqual(Date.now())
  })
})

describe('options and arguments', () => {
  it.each([
    ['an unknown option', { store: {} }, 'store'],
    ['data that is not a data set', { data: new Map() }, 'data'],
    ['a clock without now()', { clock: Date }, 'clock'],
    ['limits that are not an object', { limits: 1 }, 'limits'],
    ['a limit below 1', { limits: { maxBatchBytes: 0 } }, 'maxBatchBytes'],
    ['an unknown limit', { limits: { maxBytes: 5 } }, 'maxBytes'],
  ])('refuses %s with INVALID_ARGUMENT naming it', (_, options, mentions) => {
    expect(() => memoryStore(options as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(mentions) }),
    )
  })

  it(`declares maxLogIdBytes (${MEMORY_MAX_LOG_ID_BYTES}) and refuses longer ids everywhere`, async () => {
    const store = memoryStore()
    expect(store.limits.maxLogIdBytes).toBe(MEMORY_MAX_LOG_ID_BYTES)
    const id = 'é'.repeat(MEMORY_MAX_LOG_ID_BYTES / 2)
    await store.append(id, 1, [{ type: 't' }])
    await store.leases.acquire(id, 'h', 1)
    const longer = `${id}x`
    for (const call of [
      () => store.append(longer, 1, [{ type: 't' }]),
      () => store.read(longer),
      () => store.wakeups.schedule(longer, 0),
      () => store.wakeups.cancel(longer),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
  })

  it('accepts times up to MAX_TIME_MS and refuses later, negative or non-finite ones', async () => {
    const clock = createManualClock()
    const store = memoryStore({ clock })
    await store.wakeups.schedule('max', MAX_TIME_MS)
    expect((await store.leases.acquire('s', 'h', MAX_TIME_MS)).expiresAt).toBe(MAX_TIME_MS)
    clock.set(MAX_TIME_MS)
    expect(await store.wakeups.claim(10, MAX_TIME_MS)).toEqual([{ logId: 'max', at: MAX_TIME_MS }])
    for (const bad of [MAX_TIME_MS + 1, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(store.wakeups.schedule('s', bad)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
      await expect(store.leases.acquire('t', 'h', bad)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
    await expect(store.leases.acquire('t', '', 1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(store.wakeups.due(-1)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })
})
