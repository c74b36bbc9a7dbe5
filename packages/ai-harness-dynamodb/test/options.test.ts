import { utf8Length } from '@tanstack/ai-harness/log'
import { createManualClock, MAX_TIME_MS } from '@tanstack/ai-harness/store'
import { describe, expect, it } from 'vitest'
import { createHarnessTable, type DynamoDbStoreOptions, dynamoDbStore, harnessTableDefinition } from '../src/index.js'
import { faultyClient } from './faults.js'
import { storesOfTest } from './support/stores.js'
import { clientConfig } from './target.js'

const stores = storesOfTest('options')
const { admin, tableName, target } = stores

/** The INVALID_ARGUMENT a factory call throws, or a failure when it throws anything else or nothing. */
function refusal(make: () => unknown): { code?: string; message: string } {
  try {
    make()
  } catch (error) {
    return error as { code?: string; message: string }
  }
  throw new Error('expected the call to be refused')
}

describe('dynamoDbStore checks its options', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['a string instead of options', 'ai-harness', /options object/],
    ['an unknown option (a typo)', { table: 'x' }, /unknown option "table".*tableName/],
    ['a table name DynamoDB refuses', { tableName: 'a b' }, /tableName.*3 to 255/],
    ['a table name that is not a string', { tableName: 42 }, /tableName/],
    ['a namespace that is not a string', { namespace: 7 }, /namespace.*string/],
    ['a namespace with a lone surrogate', { namespace: 'ns-\ud800' }, /namespace.*well-formed/],
    ['a namespace that leaves no room for ids', { namespace: 'n'.repeat(2020) }, /namespace.*leave 36 bytes/],
    ['a client that is not a client', { client: { region: 'x' } }, /client.*DynamoDBClient/],
    ['both client and clientConfig', { client: admin, clientConfig: {} }, /client.*clientConfig.*not both/],
    ['a clientConfig that is not an object', { clientConfig: 'us-east-1' }, /clientConfig/],
    ['a clock that is a function', { clock: Date.now }, /clock.*now\(\)/],
    ['limits that are not an object', { limits: 5 }, /limits/],
    ['an unknown limit', { limits: { maxBytes: 5 } }, /unknown option "maxBytes"/],
    ['a negative limit', { limits: { maxBatchBytes: -1 } }, /limits.maxBatchBytes.*positive integer/],
    ['a limit that is not a number', { limits: { maxRecordBytes: '1kb' } }, /limits.maxRecordBytes/],
    ['a batch limit over an item', { limits: { maxBatchBytes: 400 * 1024 } }, /fit in a DynamoDB item/],
    ['a log id limit over the partition key', { limits: { maxLogIdBytes: 4096 } }, /limits.maxLogIdBytes.*at most/],
    ['negative retries', { retry: { retries: -1 } }, /retry.retries/],
    ['a retry sleep that is not a function', { retry: { sleep: 10 } }, /retry.sleep.*function/],
    ['an unknown retry setting', { retry: { tries: 3 } }, /unknown option "tries"/],
    ['a zero request timeout', { requestTimeoutMs: 0 }, /requestTimeoutMs/],
    ['an infinite request timeout', { requestTimeoutMs: Number.POSITIVE_INFINITY }, /requestTimeoutMs/],
  ]
  it.each(cases)('refuses %s with INVALID_ARGUMENT naming it', (_, options, message) => {
    const error = refusal(() => dynamoDbStore(options as DynamoDbStoreOptions))
    expect(error.code).toBe('INVALID_ARGUMENT')
    expect(error.message).toMatch(message)
  })

  it('the table helpers check theirs too', async () => {
    expect(refusal(() => harnessTableDefinition('x')).code).toBe('INVALID_ARGUMENT')
    await expect(createHarnessTable(undefined as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(createHarnessTable(admin, { timeout: 5 } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: /timeout/ })
    await expect(createHarnessTable(admin, { pollMs: -1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: /pollMs/ })
  })
})

const open = (options: Partial<DynamoDbStoreOptions> = {}) => stores.open(options)

describe('declared limits and times', () => {
  it('declares maxLogIdBytes as what the partition key leaves after the namespace, and keeps ids up to it', async () => {
    const namespace = stores.namespace()
    const faulty = faultyClient(clientConfig(target), [])
    const store = dynamoDbStore({ tableName, namespace, client: faulty.client })
    try {
      const room = 2048 - utf8Length(`${encodeURIComponent(namespace)}|`)
      expect(store.limits.maxLogIdBytes).toBe(room)
      // Multi-byte characters up to the byte limit: kept exactly.
      const longest = '\u00e9'.repeat(Math.floor(room / 2)) + 'x'.repeat(room % 2)
      expect(utf8Length(longest)).toBe(room)
      await store.append(longest, 1, [{ type: 't' }])
      expect((await store.read(longest)).length).toBe(1)
      const before = faulty.calls.length
      await expect(store.append(`${longest}x`, 1, [{ type: 't' }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
      await expect(store.leases.acquire(`${longest}x`, 'h', 1000)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
      expect(faulty.calls.length).toBe(before)
      // A lower declared limit is kept and enforced.
      const lower = dynamoDbStore({ tableName, namespace, client: faulty.client, limits: { maxLogIdBytes: 64 } })
      expect(lower.limits.maxLogIdBytes).toBe(64)
      await expect(lower.read('y'.repeat(65))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    } finally {
      faulty.destroy()
    }
  })

  it('wakeups keep times from 0 to MAX_TIME_MS, fractions included; other times are INVALID_ARGUMENT', async () => {
    const clock = createManualClock(0)
    const store = open({ clock })
    await store.wakeups.schedule('zero', 0)
    await store.wakeups.schedule('half', 1000.5)
    await store.wakeups.schedule('last', MAX_TIME_MS)
    expect(await store.wakeups.due(10)).toEqual([{ logId: 'zero', at: 0 }])
    clock.set(1000)
    expect((await store.wakeups.due(10)).map((w) => w.logId)).toEqual(['zero'])
    clock.set(1001)
    expect(await store.wakeups.due(10)).toEqual([
      { logId: 'zero', at: 0 },
      { logId: 'half', at: 1000.5 },
    ])
    clock.set(MAX_TIME_MS)
    expect(await store.wakeups.claim(10, 60_000)).toEqual([
      { logId: 'zero', at: 0 },
      { logId: 'half', at: 1000.5 },
      { logId: 'last', at: MAX_TIME_MS },
    ])
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
