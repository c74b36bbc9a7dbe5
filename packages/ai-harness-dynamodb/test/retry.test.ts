import { randomUUID } from 'node:crypto'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { HarnessError } from '@tanstack/ai-harness'
import { createManualClock } from '@tanstack/ai-harness/store'
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest'
import { deleteNamespace, type DynamoDbStoreOptions, dynamoDbStore, isTransientDynamoError } from '../src/index.js'
import { type Fault, faultyClient } from './faults.js'
import { clientConfig } from './target.js'

// The retries every store shares (a transient write retried and landed once, spent retries
// ending in STORE_UNAVAILABLE, a lost reply never written twice) are the suite's cases
// store.retry.*, run on this store by its conformance test; here, what is this store's own.

const target = inject('dynamodb')
const { tableName } = target
const admin = new DynamoDBClient(clientConfig(target))
const namespaces: string[] = []
const opened: Array<{ destroy(): void }> = []
afterEach(async () => {
  for (const o of opened.splice(0)) o.destroy()
  for (const namespace of namespaces.splice(0)) await deleteNamespace({ client: admin, tableName, namespace })
})
afterAll(() => admin.destroy())

/** A store whose transport injects `faults`, with recorded backoff instead of real sleeps. */
function storeWith(faults: Fault[], options: Partial<DynamoDbStoreOptions> = {}) {
  const namespace = options.namespace ?? `retry-${randomUUID()}`
  namespaces.push(namespace)
  const faulty = faultyClient(clientConfig(target), faults)
  opened.push(faulty)
  const delays: number[] = []
  const retried: string[] = []
  const store = dynamoDbStore({
    tableName,
    namespace,
    client: faulty.client,
    retry: {
      sleep: async (ms) => void delays.push(ms),
      random: () => 0.5,
      onRetry: (error) => void retried.push((error as Error).name),
    },
    ...options,
  })
  return { store, faulty, delays, retried, namespace }
}

const codeOf = async (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: HarnessError) => error.code ?? error.name,
  )

describe('transient failures are retried with backoff and jitter', () => {
  it('a throttled, then failing (5xx) append lands exactly once after two retries', async () => {
    const { store, faulty, delays, retried } = storeWith([
      { op: 'PutItem', error: 'ProvisionedThroughputExceededException' },
      { op: 'PutItem', status: 500 },
    ])
    await expect(store.append('s', 1, [{ type: 't', n: 1 }])).resolves.toEqual({ nextSeq: 2 })
    expect(faulty.count('PutItem')).toBe(3)
    expect(retried).toEqual(['ProvisionedThroughputExceededException', 'InternalServerError'])
    // Full jitter over an exponential bound: 0.5 * 20 ms, then 0.5 * 40 ms.
    expect(delays).toEqual([10, 20])
    expect((await store.read('s')).map((e) => e.record)).toEqual([{ type: 't', n: 1 }])
  })

  it.each([
    ['ProvisionedThroughputExceededException', { error: 'ProvisionedThroughputExceededException' as const }],
    ['ThrottlingException', { error: 'ThrottlingException' as const }],
    ['RequestLimitExceeded', { error: 'RequestLimitExceeded' as const }],
    ['InternalServerError', { status: 500 as const }],
    ['ServiceUnavailable', { status: 503 as const }],
  ])('a read that meets %s is retried and answers', async (name, fault) => {
    const { store, faulty, retried } = storeWith([{ op: 'Query', ...fault }])
    await store.append('s', 1, [{ type: 't' }])
    expect((await store.read('s')).length).toBe(1)
    expect(retried).toEqual([name])
    expect(faulty.pending).toEqual([])
  })

  it('leases and wakeups are retried too', async () => {
    const clock = createManualClock()
    const { store, retried } = storeWith(
      [
        { op: 'UpdateItem', error: 'ThrottlingException' },
        { op: 'PutItem', status: 503 },
      ],
      { clock },
    )
    const lease = await store.leases.acquire('s', 'host', 1000)
    await store.wakeups.schedule('s', clock.now())
    expect(lease.fence).toBe(1)
    expect(await store.wakeups.due(5)).toEqual([{ logId: 's', at: clock.now() }])
    expect(retried).toEqual(['ThrottlingException', 'ServiceUnavailable'])
  })

  it('a request DynamoDB refuses for good (a missing table) is STORE_UNAVAILABLE at once, saying what to do', async () => {
    const { store, faulty } = storeWith([], { tableName: `missing-${randomUUID()}` })
    const error = (await store.read('s').catch((e: HarnessError) => e)) as HarnessError
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', cause: { name: 'ResourceNotFoundException' } })
    expect(error.message).toMatch(/createHarnessTable/)
    expect(faulty.count('Query')).toBe(1)
  })
})

describe('conflicts are answers, never retried blindly', () => {
  it('a conditional check failure on append is not retried', async () => {
    const { store: a, namespace } = storeWith([])
    const { store: b, faulty, retried } = storeWith([], { namespace })
    await a.append('s', 1, [{ type: 't', by: 'a' }])
    const error = await b.append('s', 1, [{ type: 't', by: 'b' }]).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 2 })
    expect(faulty.count('PutItem')).toBe(1)
    expect(retried).toEqual([])
    // A stale writer whose seq is not the tail is refused before it writes anything.
    await expect(codeOf(b.append('s', 3, [{ type: 't' }]))).resolves.toBe('LOG_CONFLICT')
    expect(faulty.count('PutItem')).toBe(1)
    expect((await a.read('s')).map((e) => e.record)).toEqual([{ type: 't', by: 'a' }])
  })

  it('a held lease is LEASE_HELD at once, with one request', async () => {
    const { store: a, namespace } = storeWith([])
    const { store: b, faulty, retried } = storeWith([], { namespace })
    await a.leases.acquire('s', 'host-a', 60_000)
    await expect(codeOf(b.leases.acquire('s', 'host-b', 60_000))).resolves.toBe('LEASE_HELD')
    expect(faulty.count('UpdateItem')).toBe(1)
    expect(retried).toEqual([])
  })

  it('a release whose response was lost still succeeds, and the lease is free', async () => {
    const { store, faulty } = storeWith([{ op: 'UpdateItem', lostResponse: true, skip: 1 }])
    const lease = await store.leases.acquire('s', 'host-a', 60_000)
    await store.leases.release(lease)
    expect(faulty.pending).toEqual([])
    const next = await store.leases.acquire('s', 'host-b', 60_000)
    expect(next.fence).toBeGreaterThan(lease.fence)
  })

  it('a claim whose response was lost keeps its wakeup, and no one else gets it', async () => {
    const clock = createManualClock()
    const { store, namespace } = storeWith([{ op: 'UpdateItem', lostResponse: true }], { clock })
    const { store: other } = storeWith([], { namespace, clock })
    await store.wakeups.schedule('s', clock.now() - 1)
    expect(await store.wakeups.claim(5, 10_000)).toEqual([{ logId: 's', at: clock.now() - 1 }])
    expect(await other.wakeups.claim(5, 10_000)).toEqual([])
  })
})

describe('error classification', () => {
  it('treats throttling, 5xx and lost connections as transient, and a failed condition as final', () => {
    const err = (name: string, extra: object = {}) => Object.assign(new Error(name), { name, ...extra })
    for (const name of ['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded', 'InternalServerError']) {
      expect(isTransientDynamoError(err(name)), name).toBe(true)
    }
    expect(isTransientDynamoError(err('Whatever', { $metadata: { httpStatusCode: 502 } }))).toBe(true)
    expect(isTransientDynamoError(err('Error', { code: 'ECONNRESET' }))).toBe(true)
    expect(isTransientDynamoError(err('ConditionalCheckFailedException', { $metadata: { httpStatusCode: 400 } }))).toBe(false)
    expect(isTransientDynamoError(err('ValidationException', { $metadata: { httpStatusCode: 400 } }))).toBe(false)
  })
})
