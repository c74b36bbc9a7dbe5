import { createHost, defineHarness, type HarnessError, isHarnessError } from '@tanstack/ai-harness'
import { createManualClock } from '@tanstack/ai-harness/store'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { DynamoDbStoreOptions } from '../src/index.js'
import { storesOfTest } from './support/stores.js'
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js'
import { clientConfig } from './target.js'

// Faults on the wire between the SDK and dynalite: a loopback TCP proxy that blackholes,
// drops replies after the request went through, or resets connections.
// What every store must do when a write's reply is lost (it lands once, a retry conflicts,
// spent retries end in STORE_UNAVAILABLE) are the suite's store.retry.* cases; here, the
// SDK's own deadlines and socket errors on a real wire.
const stores = storesOfTest('net')
const { target } = stores
let proxy: TcpProxy

beforeAll(async () => {
  proxy = await startTcpProxy(target.endpoint)
})
// Heal the wire before the stores' cleanup deletes the test's items through it.
afterEach(() => {
  proxy.mode = 'pass'
})
afterAll(() => proxy.close())

/** A store that talks to dynalite through the proxy: short deadlines, no real backoff. */
function throughProxy(options: Partial<DynamoDbStoreOptions> = {}) {
  return stores.open({
    clientConfig: { ...clientConfig(target), endpoint: proxy.endpoint },
    requestTimeoutMs: 300,
    retry: { retries: 2, sleep: async () => {} },
    ...options,
  })
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the call to fail')
    },
    (error: HarnessError) => error,
  )

describe.runIf(target.emulator === 'dynalite')('network faults (dynalite behind a loopback proxy)', () => {
  it('a blackholed connection ends each try at its deadline, is retried, and fails with STORE_UNAVAILABLE', async () => {
    const store = throughProxy()
    await store.append('s', 1, [{ type: 't' }])
    proxy.mode = 'blackhole'
    const error = await failureOf(store.read('s'))
    expect(isHarnessError(error, 'STORE_UNAVAILABLE')).toBe(true)
    expect((error.cause as Error).name).toBe('TimeoutError')
    proxy.mode = 'pass'
    expect((await store.read('s')).length).toBe(1)
  })

  it('an append whose reply is lost times out, and its retry finds it landed: a conflict, stored once', async () => {
    const retries: string[] = []
    const store = throughProxy({
      retry: {
        retries: 2,
        // The wire heals before the retry: the retry meets the item the first try wrote.
        sleep: async () => {
          proxy.mode = 'pass'
        },
        onRetry: (error) => void retries.push((error as Error).name),
      },
    })
    await store.append('s', 1, [{ type: 't', n: 1 }])
    proxy.mode = 'drop-replies'
    const error = await failureOf(store.append('s', 2, [{ type: 't', n: 2 }]))
    expect(error.code).toBe('LOG_CONFLICT')
    expect(retries).toEqual(['TimeoutError'])
    const fresh = throughProxy({ namespace: store.namespace })
    expect((await fresh.read('s')).map((e) => e.record.n)).toEqual([1, 2])
  })

  it('reset connections end every store method in STORE_UNAVAILABLE with the socket error as cause, never a raw SDK error', async () => {
    const clock = createManualClock()
    const store = throughProxy({ clock })
    const lease = await store.leases.acquire('s', 'host', 60_000)
    proxy.mode = 'reset'
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['append', () => store.append('s', 1, [{ type: 't' }])],
      ['read', () => store.read('s', { after: 3 })],
      ['delete', () => store.delete('s')],
      ['acquire', () => store.leases.acquire('t', 'host', 1000)],
      ['renew', () => store.leases.renew(lease, 1000)],
      ['release', () => store.leases.release(lease)],
      ['schedule', () => store.wakeups.schedule('s', clock.now())],
      ['cancel', () => store.wakeups.cancel('s')],
      ['due', () => store.wakeups.due(5)],
      ['claim', () => store.wakeups.claim(5, 1000)],
    ]
    for (const [name, call] of calls) {
      const error = await failureOf(call())
      expect(isHarnessError(error, 'STORE_UNAVAILABLE'), `${name}: ${String(error)}`).toBe(true)
      expect((error.cause as { code?: string }).code, name).toBe('ECONNRESET')
    }
  })

  it('host.open on reset connections fails with STORE_UNAVAILABLE', async () => {
    const store = throughProxy()
    const harness = defineHarness({ name: 'h', adapter: scriptedText(['ok']), tools: [] })
    const host = createHost({ store, harnesses: harness })
    proxy.mode = 'reset'
    const error = await failureOf(host.open({ sessionId: 's' }))
    expect(error.code).toBe('STORE_UNAVAILABLE')
  })
})
