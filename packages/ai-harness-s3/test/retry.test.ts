import { S3Client } from '@aws-sdk/client-s3'
import { isHarnessError } from '@tanstack/ai-harness'
import type { LogConflictError } from '@tanstack/ai-harness/store'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type S3Store, s3Store } from '../src/index.js'
import { type Fault, type S3TestServer, startS3TestServer } from './server/s3-test-server.js'
import { ensureBucket, localClientConfig } from './support/s3-target.js'

// The retries every store shares (a transient write retried and landed once, spent retries
// ending in STORE_UNAVAILABLE, a lost reply never written twice) are the suite's cases
// store.retry.*, run on this store by its conformance test; here, what is this store's own.
// Faults need the local server, so these tests always run on their own instance of it.
let server: S3TestServer
const bucket = 'retry-test'
const stores: S3Store[] = []
let namespace = 0

beforeAll(async () => {
  server = await startS3TestServer()
  const admin = new S3Client(localClientConfig(server.endpoint))
  await ensureBucket(admin, bucket)
  admin.destroy()
})
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()))
  await server.close()
})
beforeEach(() => {
  namespace++
  server.setFault(undefined)
})

/** A store whose backoff only records its delays: the tests never sleep. */
function openStore(delays: number[] = []) {
  const store = s3Store({
    bucket,
    prefix: `retry-${namespace}`,
    clientConfig: localClientConfig(server.endpoint),
    retry: { retries: 4, baseMs: 20, maxMs: 2000, sleep: async (ms) => void delays.push(ms) },
  })
  stores.push(store)
  return store
}

/** Fails the first `times` PUTs of log batches with `fault`, counting every batch PUT. */
function failBatchPuts(times: number, fault: Fault) {
  const seen = { puts: 0 }
  server.setFault((request) => {
    if (request.method !== 'PUT' || !request.key?.includes('/log/')) return undefined
    seen.puts++
    return seen.puts <= times ? fault : undefined
  })
  return seen
}

const record = (n: number) => ({ type: 'test.record', n })

describe('retries of transient S3 failures', () => {
  it('an append retries SlowDown and 5xx with backoff and jitter, then lands once', async () => {
    const delays: number[] = []
    const store = openStore(delays)
    const seen = failBatchPuts(2, { status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' })
    expect(await store.append('s', 1, [record(1), record(2)])).toEqual({ nextSeq: 3 })
    expect(seen.puts).toBe(3)
    expect(delays).toHaveLength(2)
    // Full jitter: each delay is drawn below the doubling cap of its attempt.
    delays.forEach((ms, attempt) => {
      expect(ms).toBeGreaterThanOrEqual(0)
      expect(ms).toBeLessThan(20 * 2 ** attempt)
    })
    expect((await store.read('s')).map((e) => e.record)).toEqual([record(1), record(2)])
  })

  it('reads retry 500 InternalError too', async () => {
    const store = openStore()
    await store.append('s', 1, [record(1)])
    let gets = 0
    server.setFault((request) => (request.method === 'GET' && gets++ < 2 ? { status: 500, code: 'InternalError' } : undefined))
    expect((await openStore().read('s')).map((e) => e.seq)).toEqual([1])
    expect(gets).toBeGreaterThan(2)
  })

  it('a request S3 refuses for good (a missing bucket) is STORE_UNAVAILABLE at once, with the cause', async () => {
    const store = s3Store({ bucket: 'no-such-bucket', clientConfig: localClientConfig(server.endpoint) })
    stores.push(store)
    let requests = server.requestCount
    await expect(store.read('s')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', cause: { name: 'NoSuchBucket' } })
    requests = server.requestCount - requests
    expect(requests).toBe(1)
  })
})

describe('conflicts are never retried blindly', () => {
  it('a 412 on the batch key is one PUT and a LOG_CONFLICT with the real next seq', async () => {
    const mine = openStore()
    const theirs = openStore()
    await mine.append('s', 1, [record(1)])
    await theirs.append('s', 2, [record(2), record(3)])
    const seen = failBatchPuts(0, { status: 500, code: 'unused' })
    const error = await mine.append('s', 2, [record(99)]).catch((e: unknown) => e)
    expect(isHarnessError(error, 'LOG_CONFLICT')).toBe(true)
    expect((error as LogConflictError).actualNextSeq).toBe(4)
    expect(seen.puts).toBe(1)
  })

  it('409 ConditionalRequestConflict maps to LOG_CONFLICT and is not retried', async () => {
    const store = openStore()
    const seen = failBatchPuts(1, {
      status: 409,
      code: 'ConditionalRequestConflict',
      message: 'A conflicting operation occurred. If using PutObject you can retry the request.',
    })
    await expect(store.append('s', 1, [record(1)])).rejects.toMatchObject({ code: 'LOG_CONFLICT' })
    expect(seen.puts).toBe(1)
    expect(await store.read('s')).toEqual([])
  })
})
