import { createHost, type HarnessStore } from '@tanstack/ai-harness'
import { createManualClock, unfencedAppends } from '@tanstack/ai-harness/testing'
import { createMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { gate, stepHarness, within } from '../support/faults.js'
import { drain, recordsOf, TEST_LEASE_MS } from '../support/harness.js'

/**
 * A memory store that ignores the lease of an append, as DynamoDB and S3 do: only the seq
 * guards the log, so nothing but the host itself keeps two of its objects from writing.
 */
function unfencedStore(data: MemoryData, clock: ReturnType<typeof createManualClock>): HarnessStore {
  return unfencedAppends(memoryStore({ data, clock }))
}

describe('one session object per session on a host (a store without fenced appends)', () => {
  it('a second open takes the session over: the first object stops, and its step that returns later writes nothing', async () => {
    const data = createMemoryData()
    const clock = createManualClock()
    const started = gate()
    const release = gate<string>()
    const { harness, keys } = stepHarness(() => {
      started.open()
      return keys.length === 1 ? release.promise : 'again'
    })
    const host = createHost({ store: unfencedStore(data, clock), harnesses: harness, clock, leaseMs: TEST_LEASE_MS, stopTimeoutMs: 50 })
    const first = await host.open({ sessionId: 's' })
    const stream = drain(first.send('go')).catch(() => [])
    await started.promise

    const second = await within(5_000, host.open({ sessionId: 's' }), 'the second open')
    expect(first.status).toBe('closed')
    await within(5_000, stream, 'the first run')
    const read = () => memoryStore({ data, clock }).read('s')
    const before = (await read()).length
    release.open('late')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await read()).toHaveLength(before)

    // The second object goes on with the cut turn: the step runs again with its key, and is logged once.
    await drain(second.resume())
    const log = await read()
    expect(recordsOf(log, 'harness.step')).toHaveLength(1)
    expect(recordsOf(log, 'harness.turn.finished')).toHaveLength(1)
    expect(new Set(keys).size).toBe(1)
    await second.close()
  })

  it('host.drive of a session that a session object of this host holds is busy, and drives it once that object is closed', async () => {
    const data = createMemoryData()
    const clock = createManualClock()
    const { harness } = stepHarness(() => 'done')
    const host = createHost({ store: unfencedStore(data, clock), harnesses: harness, clock, leaseMs: TEST_LEASE_MS })
    await host.submit({ sessionId: 's', inputId: 'in-1', prompt: 'go' })
    const held = await host.open({ sessionId: 's' })
    expect(await host.drive('s')).toBe('busy')
    expect(held.status).not.toBe('closed')
    await held.close()
    expect(await host.drive('s')).toBe('done')
    expect(recordsOf(await memoryStore({ data, clock }).read('s'), 'harness.turn.finished')).toHaveLength(1)
  })
})
