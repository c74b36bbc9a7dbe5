import { PGlite } from '@electric-sql/pglite'
import { createManualClock, type LogRecord, MAX_TIME_MS } from '@tanstack/ai-harness/store'
import { afterAll, describe, expect, it } from 'vitest'
import { POSTGRES_MAX_LOG_ID_BYTES, postgresStore } from '../src/index.js'
import { database } from './instances.js'

// Options and arguments are checked before anything deeper can fail: INVALID_ARGUMENT,
// naming what was wrong and what is accepted.

const lite = new PGlite()
afterAll(() => lite.close())
const invalid = (mentions: string) => expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining(mentions) })

describe('postgresStore options', () => {
  it.each([
    ['a PGlite passed as pglite', { pglite: lite }, 'pglite'],
    ['no client', {}, 'client'],
    ['a client that is none', { client: {} }, 'client'],
    ['a client that is a string', { client: 'postgres://localhost' }, 'client'],
    ['a schema that is not a string', { client: lite, schema: 5 }, 'schema'],
    ['a prefix that is not a string', { client: lite, tablePrefix: {} }, 'tablePrefix'],
    ['limits that are not an object', { client: lite, limits: 'big' }, 'limits'],
    ['a limit below 1', { client: lite, limits: { maxRecordBytes: 0 } }, 'maxRecordBytes'],
    ['a limit that is not whole', { client: lite, limits: { maxBatchBytes: 1.5 } }, 'maxBatchBytes'],
    ['an unknown limit', { client: lite, limits: { maxRecords: 5 } }, 'maxRecords'],
    ['a longer id than the indexes keep', { client: lite, limits: { maxLogIdBytes: 4096 } }, 'maxLogIdBytes'],
    ['retry that is not an object', { client: lite, retry: 3 }, 'retry'],
    ['negative retries', { client: lite, retry: { retries: -1 } }, 'retries'],
    ['a backoff that is not a number', { client: lite, retry: { baseMs: '10' } }, 'baseMs'],
    ['isTransient that is not a function', { client: lite, retry: { isTransient: true } }, 'isTransient'],
    ['an unknown retry option', { client: lite, retry: { attempts: 3 } }, 'attempts'],
    ['a clock without now()', { client: lite, clock: { now: 5 } }, 'clock'],
    ['closeClient that is not a boolean', { client: lite, closeClient: 'yes' }, 'closeClient'],
    ['an unknown option', { client: lite, schemaName: 'x' }, 'schemaName'],
  ])('refuses %s', (_, options, mentions) => {
    expect(() => postgresStore(options as never)).toThrow(invalid(mentions))
  })

  it('refuses no options at all', () => {
    expect(() => postgresStore(undefined as never)).toThrow(invalid('options'))
  })

  it('accepts every kind of client, and undefined for an optional option', () => {
    const pool = { connect: async () => ({}), totalCount: 0, query: async () => ({ rows: [] }), end: async () => {} }
    const client = { query: async () => ({ rows: [] }), end: async () => {} }
    for (const c of [lite, pool, client])
      expect(postgresStore({ client: c as never, schema: undefined, limits: { maxRecordBytes: undefined } }).limits.maxRecordBytes).toBe(
        256 * 1024,
      )
  })
})

describe.each(['pg', 'PGlite'] as const)('arguments (%s)', (name) => {
  const db = database(name)
  afterAll(() => db.close())

  it(`keeps log ids up to ${POSTGRES_MAX_LOG_ID_BYTES} bytes in the log, leases and wakeups, and refuses longer ones first`, async () => {
    const clock = createManualClock()
    const store = db.instance(await db.schema('ids'), { clock })
    expect(store.limits.maxLogIdBytes).toBe(POSTGRES_MAX_LOG_ID_BYTES)
    // Four-byte characters with a different code point each: nothing for an index to compress.
    const id = Array.from({ length: POSTGRES_MAX_LOG_ID_BYTES / 4 }, (_, i) => String.fromCodePoint(0x10000 + i * 37)).join('')
    expect(Buffer.byteLength(id)).toBe(POSTGRES_MAX_LOG_ID_BYTES)
    const lease = await store.leases.acquire(id, 'host', 1000)
    await store.append(id, 1, [{ type: 't' }], { lease })
    await store.wakeups.schedule(id, clock.now())
    expect((await store.read(id)).map((e) => e.seq)).toEqual([1])
    expect(await store.wakeups.due(1)).toEqual([{ logId: id, at: clock.now() }])
    const longer = `${id}x`
    for (const call of [
      () => store.append(longer, 1, [{ type: 't' }]),
      () => store.read(longer),
      () => store.delete(longer),
      () => store.leases.acquire(longer, 'host', 1000),
      () => store.leases.renew({ ...lease, logId: longer }, 1000),
      () => store.wakeups.schedule(longer, 0),
      () => store.wakeups.cancel(longer),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
  })

  it('accepts times up to MAX_TIME_MS and refuses later, negative or non-finite ones', async () => {
    const clock = createManualClock()
    const store = db.instance(await db.schema('times'), { clock })
    await store.wakeups.schedule('max', MAX_TIME_MS)
    const lease = await store.leases.acquire('s', 'host', MAX_TIME_MS)
    expect(lease.expiresAt).toBe(MAX_TIME_MS)
    expect((await store.leases.renew(lease, MAX_TIME_MS)).expiresAt).toBe(MAX_TIME_MS)
    clock.set(MAX_TIME_MS)
    expect(await store.wakeups.due(10)).toEqual([{ logId: 'max', at: MAX_TIME_MS }])
    expect(await store.wakeups.claim(10, MAX_TIME_MS)).toEqual([{ logId: 'max', at: MAX_TIME_MS }])
    for (const bad of [MAX_TIME_MS + 1, -1, Number.NaN, Number.POSITIVE_INFINITY, '5']) {
      await expect(store.wakeups.schedule('s', bad as number)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
      await expect(store.leases.acquire('s', 'host', bad as number)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
      await expect(store.wakeups.claim(1, bad as number)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
    for (const owner of ['', 'a\u0000b', 5]) {
      await expect(store.leases.acquire('s', owner as string, 1000)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
    for (const limit of [-1, Number.NaN, '3']) {
      await expect(store.wakeups.due(limit as number)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
      await expect(store.read('s', { limit: limit as number })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    }
  })

  it('orders wakeups due at the same time by id in code point order (UTF-8 bytes, COLLATE "C")', async () => {
    const store = db.instance(await db.schema('order'), { clock: createManualClock(1000) })
    for (const id of ['\u{10000}', '\uffff', 'b', 'é', 'a', 'ab']) await store.wakeups.schedule(id, 5)
    expect((await store.wakeups.due(10)).map((w) => w.logId)).toEqual(['a', 'ab', 'b', 'é', '\uffff', '\u{10000}'])
  })

  it('keeps quotes, backslashes and SQL in ids, owners and records as exact text', async () => {
    const store = db.instance(await db.schema('hostile'))
    const hostile = ["'); DROP TABLE x; --", "E'\\\\'", '\\', "''", '"{},NULL"', '$1', "\\'; SELECT 1; --", '{"a","b"}', 'NULL']
    for (const [i, text] of hostile.entries()) {
      const id = `id ${text}`
      const lease = await store.leases.acquire(id, `owner ${text}`, 1000)
      const batch: LogRecord[] = [
        { type: 't', text, i },
        { type: text, nested: { [text]: [text] } },
      ]
      await store.append(id, 1, batch.slice(0, 1), { lease })
      await store.append(id, 2, batch, { lease })
      await store.wakeups.schedule(id, i)
      expect((await store.read(id)).map((e) => e.record)).toEqual([batch[0], ...batch])
      await store.leases.release(lease)
    }
    expect((await store.wakeups.due(100)).map((w) => w.logId)).toEqual(hostile.map((text) => `id ${text}`))
  })
})
