import { S3Client } from '@aws-sdk/client-s3'
import { createHost, defineHarness, type HarnessError, isHarnessError } from '@tanstack/ai-harness'
import { createManualClock } from '@tanstack/ai-harness/store'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
// One proxy for both AWS stores' tests, until the core's testing tools have one.
import { startTcpProxy, type TcpProxy } from '../../ai-harness-dynamodb/test/support/tcp-proxy.js'
import { type S3Store, type S3StoreOptions, s3Store } from '../src/index.js'
import { type S3TestServer, startS3TestServer } from './server/s3-test-server.js'
import { ensureBucket, localClientConfig } from './support/s3-target.js'

// Faults on the wire between the SDK and the S3 test server: a loopback TCP proxy that
// blackholes, drops replies after the request went through, or resets connections.
// What every store must do when a write's reply is lost (it lands once, a retry conflicts,
// spent retries end in STORE_UNAVAILABLE) are the suite's store.retry.* cases; here, the
// SDK's own deadlines and socket errors on a real wire.
let server: S3TestServer
let proxy: TcpProxy
const bucket = 'network-test'
const stores: S3Store[] = []
let namespace = 0

beforeAll(async () => {
  server = await startS3TestServer()
  const admin = new S3Client(localClientConfig(server.endpoint))
  await ensureBucket(admin, bucket)
  admin.destroy()
  proxy = await startTcpProxy(server.endpoint)
})
afterEach(async () => {
  proxy.mode = 'pass'
  for (const store of stores.splice(0)) await store.close()
})
afterAll(async () => {
  await proxy.close()
  await server.close()
})

/** A store that talks to the server through the proxy: short deadlines, no real backoff. */
function throughProxy(options: Partial<S3StoreOptions> = {}) {
  const store = s3Store({
    bucket,
    prefix: `net-${++namespace}`,
    clientConfig: localClientConfig(proxy.endpoint),
    requestTimeoutMs: 300,
    retry: { retries: 2, sleep: async () => {} },
    ...options,
  })
  stores.push(store)
  return store
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the call to fail')
    },
    (error: HarnessError) => error,
  )

describe('network faults (the S3 test server behind a loopback proxy)', () => {
  it('a blackholed connection ends each try at its deadline, is retried, and fails with STORE_UNAVAILABLE', async () => {
    const store = throughProxy()
    await store.append('s', 1, [{ type: 't' }])
    proxy.mode = 'blackhole'
    const error = await failureOf(throughProxy({ prefix: store.prefix }).read('s'))
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
        // The wire heals before the retry: the retry meets the object the first try wrote.
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
    expect((await throughProxy({ prefix: store.prefix }).read('s')).map((e) => e.record.n)).toEqual([1, 2])
  })

  it('reset connections end every store method in STORE_UNAVAILABLE with the socket error as cause, never a raw SDK error', async () => {
    const clock = createManualClock()
    const store = throughProxy({ clock })
    const lease = await store.leases.acquire('s', 'host', 60_000)
    await store.wakeups.schedule('s', clock.now())
    proxy.mode = 'reset'
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['append', () => store.append('s', 1, [{ type: 't' }])],
      ['read', () => store.read('s', { after: 3 })],
      ['delete', () => store.delete('s')],
      ['acquire', () => store.leases.acquire('t', 'host', 1000)],
      ['renew', () => store.leases.renew(lease, 1000)],
      ['release', () => store.leases.release(lease)],
      ['schedule', () => store.wakeups.schedule('s', clock.now() + 5)],
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
