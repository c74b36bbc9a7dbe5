import { utf8Length } from '@tanstack/ai-harness/log'
import { createManualClock, MAX_TIME_MS } from '@tanstack/ai-harness/store'
import { describe, expect, it } from 'vitest'
import { type S3StoreOptions, s3Store } from '../src/index.js'
import { listKeys } from './support/objects.js'
import { storesOfTest } from './support/stores.js'

const stores = storesOfTest('options')
const { admin, target } = stores

function refusal(make: () => unknown): { code?: string; message: string } {
  try {
    make()
  } catch (error) {
    return error as { code?: string; message: string }
  }
  throw new Error('expected the call to be refused')
}

describe('s3Store checks its options', () => {
  const ok = { bucket: 'b' }
  const cases: Array<[string, unknown, RegExp]> = [
    ['nothing', undefined, /options object/],
    ['a bucket name alone', 'my-bucket', /options object/],
    ['no bucket', {}, /bucket/],
    ['an empty bucket', { bucket: '' }, /bucket/],
    ['an unknown option (a typo)', { ...ok, prefx: 'x' }, /unknown option "prefx".*prefix/],
    ['a prefix that is not a string', { ...ok, prefix: 5 }, /prefix.*string/],
    ['a prefix with a lone surrogate', { ...ok, prefix: 'p-\ud800' }, /prefix.*well-formed/],
    ['a prefix that leaves no room for ids', { ...ok, prefix: 'p'.repeat(900) }, /prefix is too long/],
    ['a client that is not a client', { ...ok, client: { region: 'x' } }, /client.*S3Client/],
    ['both client and clientConfig', { ...ok, client: admin, clientConfig: {} }, /not both/],
    ['a clientConfig that is not an object', { ...ok, clientConfig: 'eu-west-1' }, /clientConfig/],
    ['a clock that is a function', { ...ok, clock: Date.now }, /clock.*now\(\)/],
    ['limits that are not an object', { ...ok, limits: 5 }, /limits/],
    ['an unknown limit', { ...ok, limits: { maxBytes: 5 } }, /unknown option "maxBytes"/],
    ['a negative limit', { ...ok, limits: { maxBatchBytes: -1 } }, /limits.maxBatchBytes.*positive integer/],
    ['a log id limit over the keys', { ...ok, limits: { maxLogIdBytes: 1000 } }, /limits.maxLogIdBytes.*at most/],
    ['a zero read concurrency', { ...ok, readConcurrency: 0 }, /readConcurrency/],
    ['negative retries', { ...ok, retry: { retries: -1 } }, /retry.retries/],
    ['an unknown retry setting', { ...ok, retry: { tries: 3 } }, /unknown option "tries"/],
    ['a retry sleep that is not a function', { ...ok, retry: { sleep: 10 } }, /retry.sleep.*function/],
    ['a negative request timeout', { ...ok, requestTimeoutMs: -1 }, /requestTimeoutMs/],
  ]
  it.each(cases)('refuses %s with INVALID_ARGUMENT naming it', (_, options, message) => {
    const error = refusal(() => s3Store(options as S3StoreOptions))
    expect(error.code).toBe('INVALID_ARGUMENT')
    expect(error.message).toMatch(message)
  })
})

const open = (options: Partial<S3StoreOptions> = {}) => stores.open(options)

describe('declared limits and times', () => {
  it('declares maxLogIdBytes as what 1024-byte keys leave after the prefix, and keeps ids up to it, however escaped', async () => {
    const store = open()
    expect(store.limits.maxLogIdBytes).toBeGreaterThanOrEqual(300)
    const clock = createManualClock()
    const withClock = open({ prefix: store.prefix, clock })
    // Every byte escaped (3 key bytes each), and multi-byte characters, up to the limit.
    for (const unit of [':', '\u00e9', '\u{1f600}']) {
      const id = unit.repeat(Math.floor(store.limits.maxLogIdBytes! / utf8Length(unit)))
      await withClock.append(id, 1, [{ type: 't' }])
      expect((await withClock.read(id)).length).toBe(1)
      await withClock.leases.acquire(id, 'h', 1000)
      await withClock.wakeups.schedule(id, MAX_TIME_MS)
      clock.set(MAX_TIME_MS)
      expect((await withClock.wakeups.due(10)).map((w) => w.logId)).toContain(id)
      clock.set(0)
      await withClock.delete(id)
    }
    const before = (await listKeys(admin, target.bucket, store.prefix)).length
    const over = ':'.repeat(store.limits.maxLogIdBytes! + 1)
    await expect(store.append(over, 1, [{ type: 't' }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(store.wakeups.schedule(over, 0)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    expect((await listKeys(admin, target.bucket, store.prefix)).length).toBe(before)
  })

  it('wakeups keep times from 0 to MAX_TIME_MS, fractions rounded up; other times are INVALID_ARGUMENT', async () => {
    const clock = createManualClock(0)
    const store = open({ clock })
    await store.wakeups.schedule('zero', 0)
    await store.wakeups.schedule('half', 1000.5)
    await store.wakeups.schedule('last', MAX_TIME_MS)
    expect(await store.wakeups.due(10)).toEqual([{ logId: 'zero', at: 0 }])
    clock.set(1000)
    expect((await store.wakeups.due(10)).map((w) => w.logId)).toEqual(['zero'])
    clock.set(MAX_TIME_MS - 1)
    expect((await store.wakeups.due(10)).map((w) => w.logId)).toEqual(['zero', 'half'])
    clock.set(MAX_TIME_MS)
    expect((await store.wakeups.claim(10, 60_000)).map((w) => w.logId)).toEqual(['zero', 'half', 'last'])
    for (const bad of [-1, MAX_TIME_MS + 1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      await expect(store.wakeups.schedule('s', bad), String(bad)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
  })

  it('leases may expire as late as MAX_TIME_MS, no later', async () => {
    const clock = createManualClock(MAX_TIME_MS - 1000)
    const store = open({ clock })
    const lease = await store.leases.acquire('s', 'h', 1000)
    expect(lease.expiresAt).toBe(MAX_TIME_MS)
    await expect(store.leases.renew(lease, 1001)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    clock.advance(500)
    expect((await store.leases.renew(lease, 500)).expiresAt).toBe(MAX_TIME_MS)
  })
})
