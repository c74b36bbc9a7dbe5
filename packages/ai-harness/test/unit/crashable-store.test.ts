import { describe, expect, it } from 'vitest'
import { createManualClock } from '../../src/store/index.js'
import { crashable } from '../../src/testing/index.js'
import { memoryStore } from '@tanstack/ai-harness-memory'

describe('crashable keeps what the store it wraps gives a host', () => {
  it("passes the append's lease, so a fencing store refuses a superseded writer", async () => {
    const clock = createManualClock(1_000)
    const store = crashable(memoryStore({ clock }))
    const old = await store.leases!.acquire('s', 'a', 100)
    clock.advance(100)
    await store.leases!.acquire('s', 'b', 100)
    await expect(store.append('s', 1, [{ type: 't' }], { lease: old })).rejects.toMatchObject({ code: 'LEASE_LOST' })
    expect(await store.read('s')).toEqual([])
  })
  it("keeps the store's clock and its listings", async () => {
    const clock = createManualClock(5_000)
    const store = crashable(memoryStore({ clock }))
    await store.append('s', 1, [{ type: 't' }])
    expect(await store.now!()).toBe(5_000)
    expect(await store.sessions!.list()).toEqual(['s'])
    store.crash()
    const hung = await Promise.race([store.now!(), new Promise((resolve) => setTimeout(() => resolve('hung'), 20))])
    expect(hung).toBe('hung')
  })
})
