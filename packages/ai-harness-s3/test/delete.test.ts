import { S3Client } from '@aws-sdk/client-s3'
import { createManualClock, type LogRecord, readAll } from '@tanstack/ai-harness'
import { describe, expect, it } from 'vitest'
import { type S3Store, s3Store } from '../src/index.js'
import { dumpPrefix, listKeys } from './support/objects.js'
import { storesOfTest } from './support/stores.js'

// Delete holds: after `delete` resolves, no instance, whatever its caches hold, writes one
// byte of the session again; a new log of the id starts clean at seq 1.
const stores = storesOfTest('delete')
const { admin, target } = stores
const clock = createManualClock()

/** `count` instances on one prefix, each with its own client and caches: separate processes. */
function instances(count: number) {
  const prefix = stores.prefix()
  return Array.from({ length: count }, () => another(prefix))
}

/** One more instance on `prefix`, with cold caches. */
const another = (prefix: string): S3Store => stores.open({ prefix, clock, retry: { baseMs: 5 } })

const rec = (n: number, secret = 'card-4242'): LogRecord => ({ type: 't', n, secret })
const dump = (store: S3Store) => dumpPrefix(admin, target.bucket, store.prefix)
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'landed',
    (error: { code?: string }) => error.code,
  )

describe('delete holds on S3', () => {
  it('a session live on several instances with warm caches: after delete no append expecting seq > 1 lands, not one byte', async () => {
    const [a, b, c, d, e, deleter] = instances(6) as [S3Store, S3Store, S3Store, S3Store, S3Store, S3Store]
    await a.append('s', 1, [rec(1), rec(2)])
    await a.append('s', 3, [rec(3)])
    expect((await b.read('s')).length).toBe(3) // b's tail: 4
    await c.append('s', 4, [rec(4), rec(5)]) // c's tail: 6 (a's and b's are stale at 4)
    expect((await d.read('s', { after: 1, limit: 1 })).map((x) => x.seq)).toEqual([2]) // d read the end of a batch
    expect((await e.read('s', { limit: 1 })).map((x) => x.seq)).toEqual([1]) // e holds seq 2, fetched with seq 1
    const lease = await a.leases.acquire('s', 'host-a', 60_000)

    await deleter.delete('s')
    const afterDelete = await dump(deleter)
    expect(afterDelete).not.toContain('card-4242')
    // What e fetched before the delete never comes back.
    expect(await e.read('s', { after: 1, limit: 1 })).toEqual([])

    // First each instance at the tail its cache holds (a conflict would refresh it)...
    for (const [name, store, seq] of [
      ['a', a, 4],
      ['b', b, 4],
      ['c', c, 6],
    ] as const) {
      expect(await codeOf(store.append('s', seq, [rec(seq, 'stale-write')])), `${name} at its cached ${seq}`).toBe('LOG_CONFLICT')
    }
    // ...then every instance at every seq it could know, and past them.
    for (const [name, store] of Object.entries({ a, b, c, d, e, deleter })) {
      for (const seq of [2, 3, 4, 5, 6, 7]) {
        expect(await codeOf(store.append('s', seq, [rec(seq, 'stale-write')])), `${name} at ${seq}`).toBe('LOG_CONFLICT')
      }
      expect(await store.read('s'), name).toEqual([])
      expect(await store.read('s', { after: 2 }), name).toEqual([])
    }
    expect(await dump(deleter)).toBe(afterDelete)
    await expect(a.leases.renew(lease, 60_000)).rejects.toMatchObject({ code: 'LEASE_LOST' })

    // A new log of the id starts clean at seq 1, from an instance with a stale cache too.
    await b.append('s', 1, [rec(1, 'new-log')])
    for (const store of [a, c, d, e, deleter]) expect((await readAll(store, 's')).map((x) => x.record.secret)).toEqual(['new-log'])
    expect(await codeOf(c.append('s', 6, [rec(6, 'stale-write')]))).toBe('LOG_CONFLICT')
    expect(await dump(deleter)).not.toContain('stale-write')
    const next = await d.leases.acquire('s', 'host-d', 60_000)
    expect(next.fence).toBeGreaterThan(lease.fence)
  })

  it('a reader paging on after a delete gets nothing of what it held or fetched ahead', async () => {
    const [writer, reader, deleter] = instances(3) as [S3Store, S3Store, S3Store]
    for (const first of [1, 4, 7]) await writer.append('s', first, [rec(first), rec(first + 1), rec(first + 2)])
    expect((await reader.read('s', { limit: 2 })).map((x) => x.seq)).toEqual([1, 2])
    // Seq 3 held from the first batch, the second fetched ahead; then the third fetched ahead.
    expect((await reader.read('s', { after: 2, limit: 2 })).map((x) => x.seq)).toEqual([3, 4])
    await deleter.delete('s')
    expect(await reader.read('s', { after: 4, limit: 4 })).toEqual([])
    expect(await reader.read('s', { after: 4 })).toEqual([])
  })

  it('a fresh instance (no cache) after delete: a stale seq conflicts, seq 1 starts the new log; reads see only it', async () => {
    const [writer, deleter] = instances(2) as [S3Store, S3Store]
    for (let seq = 1; seq <= 5; seq++) await writer.append('s', seq, [rec(seq)])
    await deleter.delete('s')
    const fresh = another(writer.prefix)
    expect(await codeOf(fresh.append('s', 6, [rec(6, 'stale-write')]))).toBe('LOG_CONFLICT')
    expect(await codeOf(fresh.append('s', 3, [rec(3, 'stale-write')]))).toBe('LOG_CONFLICT')
    await fresh.append('s', 1, [rec(1, 'new-log'), rec(2, 'new-log')])
    await fresh.append('s', 3, [rec(3, 'new-log')])
    const other = another(writer.prefix)
    expect((await other.read('s', { after: 1 })).map((x) => [x.seq, x.record.secret])).toEqual([
      [2, 'new-log'],
      [3, 'new-log'],
    ])
    expect((await readAll(writer, 's', 1)).map((x) => x.record.secret)).toEqual(['new-log', 'new-log', 'new-log'])
    // Deleted twice: both generations stay closed.
    await other.delete('s')
    for (const seq of [4, 2, 3, 6]) expect(await codeOf(writer.append('s', seq, [rec(seq, 'stale-write')]))).toBe('LOG_CONFLICT')
    expect(await readAll(fresh, 's')).toEqual([])
    expect(await dump(other)).not.toMatch(/stale-write|new-log|card-4242/)
  })

  it('delete racing writers that append back to back: it resolves, the log is empty and nothing written before it survives', async () => {
    const writers = instances(4)
    const deleter = another(writers[0]!.prefix)
    await writers[0]!.append('s', 1, [rec(1)])
    let stop = false
    const loops = writers.map(async (w, i) => {
      // Each writer appends at its own idea of the tail, reading only after a conflict.
      let next = (await w.read('s')).length + 1
      while (!stop) {
        try {
          next = (await w.append('s', next, [rec(next, `race-${i}`)])).nextSeq
        } catch {
          next = (await w.read('s')).length + 1
          if (next === 1) return // the log is gone: a writer of the old log stops, as the harness does
        }
      }
    })
    let entries: unknown[]
    try {
      await new Promise((resolve) => setTimeout(resolve, 50))
      await deleter.delete('s')
      entries = await readAll(deleter, 's')
    } finally {
      stop = true
      await Promise.all(loops)
    }
    expect(entries).toEqual([])
    expect(await readAll(deleter, 's')).toEqual([])
    expect(await dump(deleter)).not.toContain('race-')
  })

  it('a writer that always wins the slot the delete tries first cannot starve it', async () => {
    const [writer] = instances(1) as [S3Store]
    await writer.append('s', 1, [rec(1)])
    let next = 2
    // The deleter's client: just before each tombstone lands on the writer's next slot, the
    // writer appends there, as a writer appending back to back does.
    const client = new S3Client(target.clientConfig)
    client.middlewareStack.add(
      (run) => async (args) => {
        const input = args.input as { Key?: string; IfNoneMatch?: string; Body?: unknown }
        if (input.IfNoneMatch === '*' && input.Body === '' && Number(input.Key?.split('/').at(-1)) === next) {
          next = (await writer.append('s', next, [rec(next, 'race')])).nextSeq
        }
        return run(args)
      },
      { step: 'initialize' },
    )
    const deleter = s3Store({ bucket: target.bucket, prefix: writer.prefix, client })
    try {
      await deleter.delete('s')
    } finally {
      client.destroy()
    }
    expect(next).toBeGreaterThan(2) // the writer did win the first slots
    expect(await writer.append('s', next, [rec(next, 'race')]).catch((e: { code?: string }) => e.code)).toBe('LOG_CONFLICT')
    expect(await readAll(writer, 's')).toEqual([])
    expect(await dump(writer)).not.toContain('race')
  })

  it('two deletes at once both resolve, and the log stays closed to every stale writer', async () => {
    const [a, b, c] = instances(3) as [S3Store, S3Store, S3Store]
    await a.append('s', 1, [rec(1)])
    await a.append('s', 2, [rec(2)])
    await Promise.all([b.delete('s'), c.delete('s')])
    // a's cache holds the tail, 3: that one first.
    for (const seq of [3, 2]) expect(await codeOf(a.append('s', seq, [rec(seq, 'stale-write')]))).toBe('LOG_CONFLICT')
    expect(await readAll(a, 's')).toEqual([])
    await a.append('s', 1, [rec(1, 'new-log')])
    expect((await readAll(b, 's')).map((x) => x.record.secret)).toEqual(['new-log'])
  })

  it('deleting a log that never existed writes nothing', async () => {
    const [store] = instances(1) as [S3Store]
    await store.delete('never')
    await store.delete('never')
    expect(await listKeys(admin, target.bucket, store.prefix)).toEqual([])
  })

  it('fences keep increasing across delete', async () => {
    const [a, b] = instances(2) as [S3Store, S3Store]
    let last = 0
    for (let i = 0; i < 3; i++) {
      const lease = await a.leases.acquire('s', `host-${i}`, 60_000)
      expect(lease.fence).toBeGreaterThan(last)
      last = lease.fence
      await b.delete('s')
      await expect(a.leases.release(lease)).rejects.toMatchObject({ code: 'LEASE_LOST' })
    }
    const after = await b.leases.acquire('s', 'host-b', 60_000)
    expect(after.fence).toBeGreaterThan(last)
    // The lease object keeps the fence and nothing else of the holder.
    expect(await dump(a)).not.toContain('host-1')
  })
})
