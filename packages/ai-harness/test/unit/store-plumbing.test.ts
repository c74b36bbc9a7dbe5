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
  isObject,
  leaseExpiry,
  MAX_TIME_MS,
  MAX_TIMER_MS,
  optionChecks,
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

describe('option checks of a store factory', () => {
  const checks = optionChecks('someStore')

  it('refuses what is not an options object, naming an example; nothing passes only when the options are optional', () => {
    expect(checks.object({ a: 1 }, '{ a }')).toEqual({ a: 1 })
    expect(checks.object(undefined, '{ a }', true)).toEqual({})
    for (const bad of [undefined, null, 'my-bucket', [], 5]) {
      expect(() => checks.object(bad, "{ bucket: 'b' }")).toThrow(invalid("someStore takes an options object such as { bucket: 'b' }, not"))
    }
    expect(() => checks.object('x', '{ a }', true)).toThrow(invalid('such as { a }, or nothing, not "x".'))
    expect(isObject({})).toBe(true)
    for (const bad of [null, [], 'x', () => {}]) expect(isObject(bad)).toBe(false)
  })

  it('names an unknown option and the options there are, at the top or in a group', () => {
    expect(() => checks.knownKeys({ a: 1, b: undefined }, ['a', 'b'])).not.toThrow()
    expect(() => checks.knownKeys({ tabel: 'x' }, ['table', 'clock'])).toThrow(
      invalid('someStore: unknown option "tabel"; its options are table, clock.'),
    )
    expect(() => checks.knownKeys({ max: 1 }, ['maxRecordBytes'], 'limits')).toThrow(
      invalid('someStore: unknown option "max" in limits; limits takes maxRecordBytes.'),
    )
  })

  it('takes a clock with now(), and nothing else', () => {
    expect(() => checks.clock(undefined)).not.toThrow()
    expect(() => checks.clock({ now: () => 5 })).not.toThrow()
    for (const bad of [Date.now, { now: 5 }, null, 'system']) {
      expect(() => checks.clock(bad)).toThrow(invalid('someStore: option clock must be an object with a now() method'))
    }
  })

  it('takes limits of the four limit names, each a whole number >= 1, and returns them', () => {
    expect(checks.limits(undefined)).toBeUndefined()
    const limits = { maxRecordBytes: 1, maxBatchBytes: 2, maxBatchRecords: 3, maxLogIdBytes: undefined }
    expect(checks.limits(limits)).toBe(limits)
    expect(() => checks.limits(5)).toThrow(invalid('someStore: option limits must be an object such as { maxRecordBytes: 65536 }, not 5.'))
    expect(() => checks.limits({ maxBytes: 5 })).toThrow(invalid('unknown option "maxBytes" in limits; limits takes maxRecordBytes'))
    for (const bad of [0, -1, 1.5, '1kb', Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => checks.limits({ maxBatchBytes: bad })).toThrow(invalid('option limits.maxBatchBytes must be a positive integer'))
    }
    expect(() => checks.positiveInteger('readConcurrency', 0)).toThrow(invalid('option readConcurrency must be a positive integer, not 0.'))
    expect(checks.positiveInteger('readConcurrency', 4)).toBe(4)
  })

  it(`takes a timeout of ms above 0 and at most MAX_TIMER_MS (${MAX_TIMER_MS}), the longest delay a timer keeps`, () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1)
    expect(checks.timeoutMs('timeoutMs', undefined)).toBeUndefined()
    expect(checks.timeoutMs('timeoutMs', 0.5)).toBe(0.5)
    expect(checks.timeoutMs('timeoutMs', MAX_TIMER_MS)).toBe(MAX_TIMER_MS)
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, MAX_TIMER_MS + 1, '100']) {
      expect(() => checks.timeoutMs('requestTimeoutMs', bad)).toThrow(
        invalid(`someStore: option requestTimeoutMs must be a number of ms above 0 and at most ${MAX_TIMER_MS}`),
      )
    }
  })

  it('takes a client with send() or a client config, not both', () => {
    const kinds = { client: 'a SomeClient', clientConfig: 'a SomeClientConfig object' }
    const client = { send: async () => ({}) }
    expect(() => checks.clientOrConfig(client, undefined, kinds)).not.toThrow()
    expect(() => checks.clientOrConfig(undefined, { region: 'x' }, kinds)).not.toThrow()
    expect(() => checks.clientOrConfig({ region: 'x' }, undefined, kinds)).toThrow(
      invalid('someStore: option client must be a SomeClient, not an object (region).'),
    )
    expect(() => checks.clientOrConfig(undefined, 'eu-west-1', kinds)).toThrow(
      invalid('option clientConfig must be a SomeClientConfig object'),
    )
    expect(() => checks.clientOrConfig(client, {}, kinds)).toThrow(invalid('someStore: pass client (yours) or clientConfig'))
  })

  it("says a store's own rule in the same words, showing an object's keys but never its values, and at most 40 characters of a string", () => {
    expect(() => checks.invalid('bucket', 'a non-empty string', '')).toThrow(
      invalid('someStore: option bucket must be a non-empty string, not "".'),
    )
    const secret = { accessKeyId: 'AKIA-not-shown' }
    const error = (() => {
      try {
        checks.invalid('credentials', 'a provider', secret)
      } catch (caught) {
        return caught as Error
      }
    })()
    expect(error?.message).toContain('not an object (accessKeyId).')
    expect(error?.message).not.toContain('AKIA')
    expect(() => checks.invalid('prefix', 'short', 'p'.repeat(50))).toThrow(invalid(`not "${'p'.repeat(40)}…".`))
    expect(() => checks.refuse('limits do not fit.')).toThrow(invalid('someStore: limits do not fit.'))
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
