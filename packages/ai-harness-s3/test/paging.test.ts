import { randomUUID } from 'node:crypto'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { readAll } from '@tanstack/ai-harness/store'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { keyLayout, s3Store } from '../src/index.js'
import { mapBounded } from '../src/objects.js'
import { deletePrefix } from './support/objects.js'
import { s3Target } from './support/s3-target.js'

const target = s3Target()
const admin = new S3Client(target.clientConfig)
const prefix = `paging-${randomUUID()}/`
afterAll(async () => {
  await deletePrefix(admin, target.bucket, prefix)
  admin.destroy()
})

/** A client that records the name of each command it sends. */
function countingClient() {
  const client = new S3Client(target.clientConfig)
  const calls: string[] = []
  client.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(context.commandName ?? '')
      return next(args)
    },
    { step: 'initialize' },
  )
  return { client, calls }
}

describe('cost of a full paged read', () => {
  it('downloads and parses each stored batch once, with one small request per page', async () => {
    const writer = s3Store({ bucket: target.bucket, prefix, clientConfig: target.clientConfig })
    // Three stored batches of 2 500 records each, read in pages of 1 000 as the harness does.
    const batches = [0, 1, 2].map((b) => Array.from({ length: 2500 }, (_, i) => ({ type: 't', n: b * 2500 + i, pad: 'x'.repeat(40) })))
    for (const [b, batch] of batches.entries()) await writer.append('s', b * 2500 + 1, batch)
    const stored = batches.reduce((sum, batch) => sum + JSON.stringify(batch).length, 0)
    await writer.close()

    const { client, calls } = countingClient()
    const reader = s3Store({ bucket: target.bucket, prefix, client })
    const parse = vi.spyOn(JSON, 'parse')
    let entries: Awaited<ReturnType<typeof readAll>>
    let parsed = 0
    try {
      entries = await readAll(reader, 's', 1000)
      parsed = parse.mock.calls.reduce((sum, [text]) => sum + String(text).length, 0)
    } finally {
      parse.mockRestore()
      client.destroy()
    }
    expect(entries.map((e) => e.record.n)).toEqual(batches.flat().map((r) => r.n))
    expect(calls.filter((c) => c === 'GetObjectCommand')).toHaveLength(3)
    // Each batch's body once (its `{"seq":…}` wrapper adds a few bytes).
    expect(parsed).toBeGreaterThanOrEqual(stored)
    expect(parsed).toBeLessThan(stored * 1.01)
    // 9 pages (8 with entries, then the empty one that ends the read), one request each that
    // would show a delete: a LIST, a HEAD of the batch whose held rest fills the page, or (the
    // second page) the GET it sends for the batches after it.
    expect(calls.filter((c) => c === 'ListObjectsV2Command' || c === 'HeadObjectCommand')).toHaveLength(8)
  })

  it('of a log of many batches, each larger than a page, lists the keys once and downloads each batch once', async () => {
    const logPrefix = `${prefix}big/`
    const writer = s3Store({ bucket: target.bucket, prefix: logPrefix, clientConfig: target.clientConfig })
    // Eight batches of 2 500 records (~170 KB each, too big for the body cache), as a long
    // session leaves them, read in pages of 1 000 as an open does.
    const batches = Array.from({ length: 8 }, (_, b) =>
      Array.from({ length: 2500 }, (_, i) => ({ type: 't', n: b * 2500 + i, pad: 'x'.repeat(40) })),
    )
    for (const [b, batch] of batches.entries()) await writer.append('s', b * 2500 + 1, batch)
    await writer.close()

    const { client, calls } = countingClient()
    const reader = s3Store({ bucket: target.bucket, prefix: logPrefix, client })
    try {
      const entries = await readAll(reader, 's', 1000)
      expect(entries.map((e) => e.record.n)).toEqual(batches.flat().map((r) => r.n))
    } finally {
      client.destroy()
    }
    const count = (name: string) => calls.filter((c) => c === name).length
    expect(count('GetObjectCommand')).toBe(8)
    // One listing where the read starts, one where it finds the end: none per batch.
    expect(count('ListObjectsV2Command')).toBe(2)
    // 21 pages (the last one empty), each with one request that would show a delete (the
    // first listing, a HEAD of the batch its records come from or a GET it sent ahead, the
    // last listing); the batches download ahead of the pages that need them.
    expect(count('HeadObjectCommand')).toBe(18)
    expect(calls).toHaveLength(20 + 8)
  })

  it('of a log of many one-record batches lists about one page of keys per page, not the rest of the log', async () => {
    // 2 100 batches of one record, as a session of single steps leaves them, written directly.
    const logPrefix = `${prefix}many/`
    const layout = keyLayout(logPrefix)
    await mapBounded(
      Array.from({ length: 2100 }, (_, i) => i + 1),
      32,
      (seq) =>
        admin.send(
          new PutObjectCommand({
            Bucket: target.bucket,
            Key: layout.batch('s', 0, seq),
            Body: `{"seq":${seq},"records":[{"type":"t","n":${seq}}]}`,
          }),
        ),
    )
    const client = new S3Client(target.clientConfig)
    let lists = 0
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ListObjectsV2Command') lists++
        return next(args)
      },
      { step: 'initialize' },
    )
    const reader = s3Store({ bucket: target.bucket, prefix: logPrefix, client })
    try {
      const entries = await readAll(reader, 's', 100)
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 2100 }, (_, i) => i + 1))
    } finally {
      client.destroy()
    }
    // 22 pages (the last one empty): the listing goes on where it stopped, 1 000 keys a
    // request, instead of listing again per page: three listings and the end's.
    expect(lists).toBeLessThanOrEqual(5)
  })
})

describe('a reader paging on', () => {
  /** Four stored batches of 2 500 records (~170 KB each, too big for the body cache). */
  async function fourBatches(logPrefix: string) {
    const writer = s3Store({ bucket: target.bucket, prefix: logPrefix, clientConfig: target.clientConfig })
    for (let b = 0; b < 4; b++) {
      await writer.append(
        's',
        b * 2500 + 1,
        Array.from({ length: 2500 }, (_, i) => ({ type: 't', n: b * 2500 + i, pad: 'x'.repeat(40) })),
      )
    }
    await writer.close()
    return keyLayout(logPrefix)
  }

  it('keeps more than one large batch downloading ahead of its pages', async () => {
    await fourBatches(`${prefix}ahead/`)
    const { client, calls } = countingClient()
    const reader = s3Store({ bucket: target.bucket, prefix: `${prefix}ahead/`, client })
    try {
      await reader.read('s', { after: 0, limit: 1000 })
      await reader.read('s', { after: 1000, limit: 1000 })
      // The second page came from the first batch alone; the next three are on their way
      // (680 KB, more than one 256 KB window), each requested once.
      expect(calls.filter((c) => c === 'GetObjectCommand')).toHaveLength(4)
      const entries = await readAll(reader, 's', 1000, 2000)
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 8000 }, (_, i) => i + 2001))
      expect(calls.filter((c) => c === 'GetObjectCommand')).toHaveLength(4)
    } finally {
      client.destroy()
    }
  })

  it('sees a delete between pages when the GET it sends ahead is the check of the page', async () => {
    await fourBatches(`${prefix}gone/`)
    const { client, calls } = countingClient()
    const reader = s3Store({ bucket: target.bucket, prefix: `${prefix}gone/`, client })
    const deleter = s3Store({ bucket: target.bucket, prefix: `${prefix}gone/`, clientConfig: target.clientConfig })
    try {
      expect(await reader.read('s', { after: 0, limit: 1000 })).toHaveLength(1000)
      await deleter.delete('s')
      const before = calls.length
      // The rest of batch 1 would fill this page; its GETs of batches 2 to 4 find tombstones.
      expect(await reader.read('s', { after: 1000, limit: 1000 })).toEqual([])
      expect(calls.slice(before)).not.toContain('HeadObjectCommand')
    } finally {
      client.destroy()
      await deleter.close()
    }
  })

  it('sends the request that shows a delete at the start of a page, not after the batch it waits for', { timeout: 15_000 }, async () => {
    const logPrefix = `${prefix}probe/`
    const layout = await fourBatches(logPrefix)
    const client = new S3Client(target.clientConfig)
    // The GET of batch 2 is answered only once a HEAD was sent after it: a page that waited
    // for that batch before it sent its HEAD would never finish.
    let getSent = false
    let release: () => void = () => {}
    const headAfterGet = new Promise<void>((resolve) => {
      release = resolve
    })
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const key = (args.input as { Key?: string }).Key
        if (context.commandName === 'HeadObjectCommand' && getSent) release()
        if (context.commandName === 'GetObjectCommand' && key === layout.batch('s', 0, 2)) {
          getSent = true
          const out = await next(args)
          await headAfterGet
          return out
        }
        return next(args)
      },
      { step: 'initialize' },
    )
    const reader = s3Store({ bucket: target.bucket, prefix: logPrefix, client })
    try {
      await reader.read('s', { after: 0, limit: 1000 })
      await reader.read('s', { after: 1000, limit: 1000 })
      // 500 records of batch 1, then 500 of batch 2, whose download started during the page before.
      const page = await reader.read('s', { after: 2000, limit: 1000 })
      expect(page.map((e) => e.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 2001))
    } finally {
      client.destroy()
    }
  })
})
