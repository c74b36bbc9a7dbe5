import { createHash } from 'node:crypto'
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureBucket, localClientConfig } from '../support/s3-target.js'
import { type S3TestServer, startS3TestServer } from './s3-test-server.js'

// The server under test gets its own instance; every assertion is what AWS documents.
let server: S3TestServer
let s3: S3Client
const Bucket = 'server-test'

beforeAll(async () => {
  server = await startS3TestServer()
  s3 = new S3Client(localClientConfig(server.endpoint))
  await ensureBucket(s3, Bucket)
})
afterAll(async () => {
  s3.destroy()
  await server.close()
})

const put = (Key: string, Body: string, condition: { IfNoneMatch?: string; IfMatch?: string } = {}) =>
  s3.send(new PutObjectCommand({ Bucket, Key, Body, ...condition }))
const text = async (Key: string) => {
  const out = await s3.send(new GetObjectCommand({ Bucket, Key }))
  return { body: await out.Body!.transformToString(), etag: out.ETag }
}
const failure = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    const e = error as { name: string; $metadata: { httpStatusCode?: number } }
    return { name: e.name, status: e.$metadata.httpStatusCode }
  }
  throw new Error('expected the request to fail')
}
const md5 = (body: string) => `"${createHash('md5').update(body).digest('hex')}"`

describe('S3 test server: conditional writes', () => {
  it('of concurrent If-None-Match puts of one key, exactly one wins and the others get 412 PreconditionFailed', async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => put('race/one', `writer ${i}`, { IfNoneMatch: '*' })))
    const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []))
    expect(winners).toHaveLength(1)
    for (const o of outcomes) {
      if (o.status === 'rejected') {
        expect(o.reason.name).toBe('PreconditionFailed')
        expect(o.reason.$metadata.httpStatusCode).toBe(412)
      }
    }
    expect((await text('race/one')).body).toBe(`writer ${winners[0]}`)
  })

  it('If-None-Match: * on an existing key fails with 412 and leaves the object as it was', async () => {
    await put('inm/a', 'first', { IfNoneMatch: '*' })
    expect(await failure(put('inm/a', 'second', { IfNoneMatch: '*' }))).toEqual({ name: 'PreconditionFailed', status: 412 })
    expect((await text('inm/a')).body).toBe('first')
  })

  it('If-Match with the current ETag replaces the object; with a stale ETag it fails with 412', async () => {
    const first = await put('im/a', 'v1')
    const second = await put('im/a', 'v2', { IfMatch: first.ETag! })
    expect(second.ETag).toBe(md5('v2'))
    expect(await failure(put('im/a', 'v3', { IfMatch: first.ETag! }))).toEqual({ name: 'PreconditionFailed', status: 412 })
    expect((await text('im/a')).body).toBe('v2')
  })

  it('If-Match on a missing key fails with 404 NoSuchKey and creates nothing', async () => {
    expect(await failure(put('im/missing', 'x', { IfMatch: md5('x') }))).toEqual({ name: 'NoSuchKey', status: 404 })
    expect(await failure(text('im/missing'))).toEqual({ name: 'NoSuchKey', status: 404 })
  })

  it('answers a failed precondition with S3 XML error body', async () => {
    await put('xml/a', 'x')
    const response = await fetch(`${server.endpoint}/${Bucket}/xml/a`, { method: 'PUT', headers: { 'if-none-match': '*' }, body: 'y' })
    expect(response.status).toBe(412)
    expect(response.headers.get('content-type')).toBe('application/xml')
    const body = await response.text()
    expect(body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<Error><Code>PreconditionFailed<\/Code><Message>/)
    expect(body).toContain('<Condition>If-None-Match</Condition>')
  })
})

describe('S3 test server: objects', () => {
  it('stores bytes as sent and gives the quoted MD5 as ETag, on PUT and GET', async () => {
    const body = '{"emoji":"\u{1F600}","nul":"\\u0000"}'
    const out = await put('obj/a', body)
    expect(out.ETag).toBe(md5(body))
    expect(await text('obj/a')).toEqual({ body, etag: md5(body) })
  })

  it('GET of a missing key is 404 NoSuchKey; DELETE of a missing key succeeds', async () => {
    expect(await failure(text('obj/none'))).toEqual({ name: 'NoSuchKey', status: 404 })
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'obj/none' }))
  })

  it('DeleteObjects removes the named keys and nothing else', async () => {
    for (const k of ['del/a', 'del/b', 'del/c']) await put(k, k)
    await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'del/a' }, { Key: 'del/c' }], Quiet: true } }))
    const listed = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'del/' }))
    expect(listed.Contents?.map((c) => c.Key)).toEqual(['del/b'])
  })

  it('refuses what it does not implement with 501 NotImplemented instead of ignoring it', async () => {
    await put('ni/a', 'abcdef')
    expect(await failure(s3.send(new GetObjectCommand({ Bucket, Key: 'ni/a', Range: 'bytes=0-1' })))).toEqual({
      name: 'NotImplemented',
      status: 501,
    })
    expect(await failure(s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'ni/', Delimiter: '/' })))).toMatchObject({ status: 501 })
  })

  it('rejects a body whose CRC32 does not match with 400 BadDigest', async () => {
    const response = await fetch(`${server.endpoint}/${Bucket}/crc/a`, {
      method: 'PUT',
      headers: { 'x-amz-checksum-crc32': 'AAAAAA==' },
      body: 'hello',
    })
    expect(response.status).toBe(400)
    expect(await response.text()).toContain('<Code>BadDigest</Code>')
  })
})

describe('S3 test server: ListObjectsV2', () => {
  const keys = ['ls/a', 'ls/a b', 'ls/a/x', 'ls/aa', 'ls/b', 'ls/\u00e9', 'ls/\uffff', 'ls/\u{1F600}', 'ls/~', 'ls/0', 'ls/A']
  beforeAll(async () => {
    for (const k of [...keys].reverse()) await put(k, k)
    await put('ls2/other', 'x')
  })
  // S3 sorts keys by their UTF-8 bytes: an astral character (F0…) after U+FFFF (EF…).
  const byUtf8 = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))

  it('lists keys under a prefix in UTF-8 byte order, and only under it', async () => {
    const out = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'ls/' }))
    expect(out.Contents?.map((c) => c.Key)).toEqual(byUtf8)
    expect(out.KeyCount).toBe(keys.length)
    expect(out.IsTruncated).toBe(false)
    expect(byUtf8.slice(-2)).toEqual(['ls/\uffff', 'ls/\u{1F600}'])
  })

  it('pages with MaxKeys and continuation tokens, each key exactly once', async () => {
    const seen: string[] = []
    let token: string | undefined
    let pages = 0
    do {
      const out = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'ls/', MaxKeys: 3, ContinuationToken: token }))
      expect(out.KeyCount).toBeLessThanOrEqual(3)
      seen.push(...(out.Contents ?? []).map((c) => c.Key!))
      token = out.IsTruncated ? out.NextContinuationToken : undefined
      if (out.IsTruncated) expect(token).toBeTruthy()
      pages++
    } while (token)
    expect(seen).toEqual(byUtf8)
    expect(pages).toBe(Math.ceil(keys.length / 3))
  })

  it('starts after StartAfter, which need not be a stored key', async () => {
    const out = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'ls/', StartAfter: 'ls/a ' }))
    expect(out.Contents?.map((c) => c.Key)).toEqual(byUtf8.filter((k) => Buffer.compare(Buffer.from(k), Buffer.from('ls/a ')) > 0))
    expect(out.StartAfter).toBe('ls/a ')
  })

  it('gives each listed key its ETag and size', async () => {
    const out = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: 'ls/b' }))
    expect(out.Contents?.[0]).toMatchObject({ Key: 'ls/b', ETag: md5('ls/b'), Size: 4 })
  })

  it('rejects a continuation token it did not issue with 400 InvalidArgument', async () => {
    expect(await failure(s3.send(new ListObjectsV2Command({ Bucket, ContinuationToken: 'bm9wZQ' })))).toEqual({
      name: 'InvalidArgument',
      status: 400,
    })
  })
})

describe('S3 test server: faults for the store tests', () => {
  it('answers an injected fault, and can apply the request before answering it', async () => {
    server.setFault((request) => (request.key === 'fault/a' ? { status: 503, code: 'SlowDown', afterApplying: true } : undefined))
    try {
      expect(await failure(put('fault/a', 'landed'))).toEqual({ name: 'SlowDown', status: 503 })
    } finally {
      server.setFault(undefined)
    }
    expect((await text('fault/a')).body).toBe('landed')
  })
})
