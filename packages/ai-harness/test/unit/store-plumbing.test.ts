import {
  boundedMap,
  checkCount,
  checkLease,
  checkLeaseTtl,
  checkOwner,
  checkRetryOptions,
  checkTime,
  compareWakeups,
  isNetworkError,
  leaseExpiry,
  MAX_TIME_MS,
  settleWithin,
  timeAfter,
  withRequestDeadline,
} from '@tanstack/ai-harness/store'
import { describe, expect, it, vi } from 'vitest'

// The plumbing every store shares, from the store author's entry point: each store calls
// these, so a refusal here is a refusal on every store.

const invalid = (mentions: string) => expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(mentions) })
const limits = { maxRecordBytes: 65_536, maxBatchBytes: 65_536, maxLogIdBytes: 128 }

describe('argument checks of leases and wakeups', () => {
  it('refuses times outside [0, MAX_TIME_MS] and keeps good ones as given', () => {
    for (const bad of [-1, MAX_TIME_MS + 1, Number.NaN, Number.POSITIVE_INFINITY, '5'])
      expect(() => checkTime(bad, 'A wakeup time')).toThrow(invalid('A wakeup time'))
    expect(checkTime(1.5, 'at')).toBe(1.5)
    expect(checkTime(MAX_TIME_MS, 'at')).toBe(MAX_TIME_MS)
  })

  it('refuses a lease ttl of 0 ms or less, and an expiry past MAX_TIME_MS', () => {
    for (const bad of [0, -1, Number.NaN, MAX_TIME_MS + 1]) expect(() => checkLeaseTtl(bad)).toThrow(invalid('ttl'))
    expect(leaseExpiry(1000, 500)).toBe(1500)
    expect(() => leaseExpiry(MAX_TIME_MS - 1000, 1001)).toThrow(invalid('MAX_TIME_MS'))
    expect(timeAfter(MAX_TIME_MS - 1000, 1001)).toBe(MAX_TIME_MS)
  })

  it('refuses owners that are empty, hold NUL or are not strings, and leases that are not what acquire returned', () => {
    for (const bad of ['', 'a\u0000b', 5]) expect(() => checkOwner(bad)).toThrow(invalid('owner'))
    expect(checkOwner('host-1')).toBe('host-1')
    const lease = { logId: 's', owner: 'h', fence: 1, expiresAt: 5 }
    expect(checkLease(lease, limits)).toBe(lease)
    for (const bad of [null, { ...lease, fence: 0 }, { ...lease, fence: 1.5 }, { ...lease, owner: '' }, { ...lease, logId: '' }]) {
      expect(() => checkLease(bad, limits)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    }
  })

  it('rounds a count down, keeps Infinity, and refuses negative or NaN counts', () => {
    expect(checkCount(2.7, 'limit')).toBe(2)
    expect(checkCount(Number.POSITIVE_INFINITY, 'limit')).toBe(Number.POSITIVE_INFINITY)
    for (const bad of [-1, Number.NaN, '3']) expect(() => checkCount(bad, "due's limit")).toThrow(invalid("due's limit"))
  })
})

describe('the rest of the plumbing', () => {
  it('orders wakeups by time, then by id in code point order (not UTF-16 units)', () => {
    const ids = ['\u{10000}', '\uffff', 'b', 'é', 'a', 'ab']
    const sorted = ids.map((logId) => ({ logId, at: 5 })).sort(compareWakeups)
    expect(sorted.map((w) => w.logId)).toEqual(['a', 'ab', 'b', 'é', '\uffff', '\u{10000}'])
    expect(
      [
        { logId: 'a', at: 2 },
        { logId: 'b', at: 1 },
      ]
        .sort(compareWakeups)
        .map((w) => w.logId),
    ).toEqual(['b', 'a'])
  })

  it('a request past its deadline fails as a network timeout and its signal aborts; one in time keeps its value', async () => {
    let seen: AbortSignal | undefined
    const late = withRequestDeadline('S3', 5, (signal) => {
      seen = signal
      return new Promise<never>(() => {})
    })
    await expect(late).rejects.toMatchObject({
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
      message: 'S3 did not answer within 5 ms (requestTimeoutMs).',
    })
    expect(isNetworkError(await late.catch((e: unknown) => e))).toBe(true)
    expect(seen?.aborted).toBe(true)
    expect(await withRequestDeadline('DynamoDB', 1000, async () => 'ok')).toBe('ok')
  })

  it('settleWithin: the outcome of the work in time, the error of the deadline after it, and no timer left behind', async () => {
    vi.useFakeTimers()
    try {
      const late = settleWithin(new Promise<never>(() => {}), 50, () => new Error('too late'))
      const failed = settleWithin(Promise.reject(new Error('refused')), 50, () => new Error('too late'))
      const kept = settleWithin(Promise.resolve('ok'), 50, () => new Error('too late'))
      await expect(kept).resolves.toBe('ok')
      await expect(failed).rejects.toThrow('refused')
      expect(vi.getTimerCount()).toBe(1)
      vi.advanceTimersByTime(50)
      await expect(late).rejects.toThrow('too late')
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })

  it('knows the network error codes worth a retry, and nothing else', () => {
    for (const code of ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'UND_ERR_SOCKET']) {
      expect(isNetworkError(Object.assign(new Error('x'), { code }))).toBe(true)
    }
    for (const error of [new Error('x'), { code: 'EACCES' }, { code: 5 }, null, undefined]) expect(isNetworkError(error)).toBe(false)
  })

  it('checks a store retry option the same way for every store', () => {
    expect(() => checkRetryOptions('someStore', undefined)).not.toThrow()
    expect(() =>
      checkRetryOptions('someStore', { retries: 0, baseMs: 1, maxMs: 2, isTransient: () => true, sleep: async () => {} }),
    ).not.toThrow()
    expect(() => checkRetryOptions('someStore', 3)).toThrow(invalid('someStore: option retry must be an object'))
    expect(() => checkRetryOptions('someStore', { retries: -1 })).toThrow(invalid('retry.retries'))
    expect(() => checkRetryOptions('someStore', { retries: 1.5 })).toThrow(invalid('retry.retries'))
    expect(() => checkRetryOptions('someStore', { maxMs: Number.POSITIVE_INFINITY })).toThrow(invalid('retry.maxMs'))
    expect(() => checkRetryOptions('someStore', { sleep: 10 })).toThrow(invalid('retry.sleep must be a function'))
    expect(() => checkRetryOptions('someStore', { tries: 3 })).toThrow(invalid('unknown option "tries"'))
  })

  it('a bounded map forgets its least recently set entry past its size', () => {
    const map = boundedMap<string, number>(2)
    map.set('a', 1).set('b', 2).set('a', 3).set('c', 4)
    expect([...map.keys()]).toEqual(['a', 'c'])
  })
})
