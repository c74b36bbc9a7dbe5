import { randomUUID } from 'node:crypto'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { utf8Length } from '@tanstack/ai-harness/log'
import { createManualClock, type LogRecord, readAll } from '@tanstack/ai-harness/store'
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest'
import { DYNAMODB_DEFAULT_LIMITS, deleteNamespace, type DynamoDbStoreOptions, dynamoDbStore, scanNamespace } from '../src/index.js'
import { MAX_PARTITION_KEY_BYTES } from '../src/keys.js'
import { faultyClient } from './faults.js'
import { clientConfig } from './target.js'

const target = inject('dynamodb')
const { tableName } = target
const admin = new DynamoDBClient(clientConfig(target))
const namespaces = new Set<string>()
const closers: Array<() => unknown> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
  for (const namespace of namespaces) await deleteNamespace({ client: admin, tableName, namespace })
  namespaces.clear()
})
afterAll(() => admin.destroy())

function open(options: Partial<DynamoDbStoreOptions> = {}) {
  const namespace = options.namespace ?? `store-${randomUUID()}`
  namespaces.add(namespace)
  const store = dynamoDbStore({ tableName, clientConfig: clientConfig(target), ...options, namespace })
  closers.push(() => store.close())
  return store
}

/** A store whose requests are counted by operation. */
function counted(namespace: string) {
  const faulty = faultyClient(clientConfig(target), [])
  closers.push(() => faulty.destroy())
  namespaces.add(namespace)
  return { store: dynamoDbStore({ tableName, namespace, client: faulty.client }), calls: faulty.calls }
}

/** `count` records whose JSON adds up to exactly `total` bytes. */
function recordsOfTotal(count: number, total: number): LogRecord[] {
  const base = utf8Length(JSON.stringify({ type: 't', pad: '' }))
  const each = Math.floor(total / count)
  return Array.from({ length: count }, (_, i) => ({ type: 't', pad: 'x'.repeat(each - base + (i === 0 ? total - each * count : 0)) }))
}

describe('cost: one request per append on the hot path', () => {
  it('a writer that knows the tail appends with one PutItem each, and a fresh reader takes over with one read', async () => {
    const namespace = `cost-${randomUUID()}`
    const writer = counted(namespace)
    await writer.store.append('s', 1, [{ type: 't', n: 1 }])
    await writer.store.append('s', 2, [{ type: 't', n: 2 }])
    await writer.store.append('s', 3, [{ type: 't', n: 3 }])
    expect(writer.calls).toEqual(['PutItem', 'PutItem', 'PutItem'])

    // Another host opens the session: it reads the log, then appends without a second look.
    const next = counted(namespace)
    expect((await next.store.read('s')).length).toBe(3)
    await next.store.append('s', 4, [{ type: 't', n: 4 }])
    expect(next.calls).toEqual(['Query', 'PutItem'])
  })

  it('a full paged read of big batches fetches each stored record byte once, in about one query per page', async () => {
    const namespace = `cost-${randomUUID()}`
    const writer = counted(namespace)
    // Three stored batches of 2 500 records each, read in pages of 1 000 as the harness does.
    const batches = [0, 1, 2].map((b) => Array.from({ length: 2500 }, (_, i) => ({ type: 't', n: b * 2500 + i, pad: 'x'.repeat(40) })))
    for (const [b, batch] of batches.entries()) await writer.store.append('s', b * 2500 + 1, batch)
    const stored = batches.reduce((sum, batch) => sum + JSON.stringify(batch).length, 0)

    const reader = counted(namespace)
    let received = 0
    reader.store.client.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args)
        const items = (result.output as { Items?: Array<{ r?: { S?: string } }> }).Items ?? []
        for (const item of items) received += item.r?.S?.length ?? 0
        return result
      },
      { step: 'initialize' },
    )
    const entries = await readAll(reader.store, 's', 1000)
    expect(entries.map((e) => e.record.n)).toEqual(batches.flat().map((r) => r.n))
    expect(received).toBe(stored)
    // 8 pages: each a small locate query, plus one records query when the page needs a new batch.
    expect(reader.calls.length).toBeLessThanOrEqual(2 * 8 + 1)
  })

  it('records are stored as JSON text in one item per batch', async () => {
    const store = open()
    const batch: LogRecord[] = [
      { type: 't', big: 2 ** 53, tiny: 5e-324, nul: 'a\u0000b' },
      { type: 't', second: true },
    ]
    await store.append('s', 1, batch)
    const items = await scanNamespace({ client: admin, tableName, namespace: store.namespace })
    expect(items).toHaveLength(1)
    expect(JSON.parse(items[0]?.r?.S ?? 'null')).toEqual(batch)
    expect(items[0]?.n?.N).toBe('2')
  })
})

describe('limits fit in one DynamoDB item', () => {
  it('a batch at every declared limit, under the longest log id, lands in one item', async () => {
    const store = open()
    const logId = 'L'.repeat(MAX_PARTITION_KEY_BYTES - utf8Length(`${encodeURIComponent(store.namespace)}|`))
    const limits = DYNAMODB_DEFAULT_LIMITS
    const many = recordsOfTotal(limits.maxBatchRecords!, limits.maxBatchBytes)
    expect(many.reduce((sum, r) => sum + utf8Length(JSON.stringify(r)), 0)).toBe(limits.maxBatchBytes)
    await store.append(logId, 1, many)
    const one = recordsOfTotal(1, limits.maxRecordBytes)
    await store.append(logId, many.length + 1, one)
    const entries = await store.read(logId, { after: many.length - 1 })
    expect(entries.map((e) => e.seq)).toEqual([many.length, many.length + 1])
    expect(entries[1]!.record).toEqual(one[0])
  })

  it('a batch over maxBatchRecords is RECORD_TOO_LARGE before any write', async () => {
    const store = open()
    const batch = Array.from({ length: DYNAMODB_DEFAULT_LIMITS.maxBatchRecords! + 1 }, () => ({ type: 't' }))
    await expect(store.append('s', 1, batch)).rejects.toMatchObject({ code: 'RECORD_TOO_LARGE' })
    expect(await scanNamespace({ client: admin, tableName, namespace: store.namespace })).toEqual([])
  })

  it('a log id longer than a partition key allows is INVALID_ARGUMENT', async () => {
    const store = open()
    await expect(store.append('x'.repeat(MAX_PARTITION_KEY_BYTES), 1, [{ type: 't' }])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })

  it('limits that would not fit in an item are refused when the store opens', () => {
    expect(() => dynamoDbStore({ limits: { maxBatchBytes: 400 * 1024 } })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
  })
})

describe('namespaces', () => {
  it('isolate logs, leases and wakeups, even when a namespace contains the separator', async () => {
    const clock = createManualClock()
    const a = open({ namespace: `ns-${randomUUID()}|x`, clock })
    const b = open({ namespace: a.namespace.slice(0, -2), clock })
    // Raw keys would both be "<ns>|x|s" without the namespace's encoding.
    await a.append('s', 1, [{ type: 't', from: 'a' }])
    await b.append('x|s', 1, [{ type: 't', from: 'b' }])
    expect((await a.read('s')).map((e) => e.record.from)).toEqual(['a'])
    expect((await b.read('x|s')).map((e) => e.record.from)).toEqual(['b'])
    await a.leases.acquire('s', 'host-a', 1000)
    await b.leases.acquire('x|s', 'host-b', 1000)
    await a.wakeups.schedule('s', clock.now())
    expect(await b.wakeups.due(10)).toEqual([])
    expect(await a.wakeups.due(10)).toEqual([{ logId: 's', at: clock.now() }])
    await b.delete('x|s')
    expect((await a.read('s')).length).toBe(1)
  })
})
