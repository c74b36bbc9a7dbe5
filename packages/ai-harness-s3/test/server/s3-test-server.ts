import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { crc32 } from 'node:zlib'
import { elements, S3_NAMESPACE, textsOf, XML_HEADER } from './xml.js'

/**
 * A small S3-compatible HTTP server for the tests, in memory, on 127.0.0.1.
 *
 * Why not s3rver 3.7.1: it ignores `If-None-Match`/`If-Match` on PutObject, lists keys in
 * directory-walk order instead of S3's byte order, and its ListObjectsV2 continuation
 * tokens use DES, which Node 20's OpenSSL 3 refuses (the request fails with 500). A
 * front on it could add the preconditions but not fix paging, so this server does the
 * few operations the store uses, with AWS's status codes, error codes and XML bodies:
 *
 * - CreateBucket, HeadBucket, DeleteBucket (path-style only)
 * - PutObject with `If-None-Match: *` or `If-Match: <etag>` (412 PreconditionFailed;
 *   `If-Match` on a missing key is 404 NoSuchKey, as AWS documents)
 * - GetObject, HeadObject, DeleteObject (204 whether or not the key exists)
 * - ListObjectsV2: UTF-8 byte order, prefix, start-after, max-keys (cap 1000),
 *   continuation tokens, encoding-type=url
 * - DeleteObjects (quiet or verbose)
 *
 * ETags are the quoted MD5 of the body, as AWS gives for single-part uploads. Checksums
 * the SDK sends (Content-MD5, x-amz-checksum-crc32, x-amz-content-sha256) are verified.
 * Anything else that would change the meaning of a request (other conditional headers,
 * ranges, copies, delimiters, ListObjects v1, aws-chunked bodies) is answered 501
 * NotImplemented, never silently ignored. Signatures are not checked.
 */
export interface S3TestServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string
  /** Requests answered so far, for tests that count round trips. */
  readonly requestCount: number
  /** Makes chosen requests fail; `undefined` clears it. */
  setFault(rule: FaultRule | undefined): void
  close(): Promise<void>
}

/** What a fault rule sees of a request. */
export interface RequestInfo {
  readonly method: string
  readonly bucket: string | undefined
  readonly key: string | undefined
  readonly query: URLSearchParams
  readonly headers: IncomingMessage['headers']
}

export interface Fault {
  status: number
  code: string
  message?: string
  /** Do the operation, then answer the error anyway: a response lost after the write. */
  afterApplying?: boolean
}

export type FaultRule = (request: RequestInfo) => Fault | undefined

interface StoredObject {
  readonly body: Buffer
  readonly etag: string
  readonly lastModified: Date
  readonly contentType: string
}

class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly detail: Record<string, string | undefined> = {},
  ) {
    super(message)
  }
}

const notImplemented = (what: string) =>
  new S3Error(501, 'NotImplemented', `A header or parameter you provided implies functionality that is not implemented: ${what}`)

const MAX_KEYS = 1000

export async function startS3TestServer(options: { port?: number } = {}): Promise<S3TestServer> {
  const buckets = new Map<string, Map<string, StoredObject>>()
  let fault: FaultRule | undefined
  let requestCount = 0

  const server = createServer((req, res) => {
    requestCount++
    void handle(req, res)
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomBytes(8).toString('hex').toUpperCase()
    res.setHeader('x-amz-request-id', requestId)
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const [bucket, key] = splitPath(url.pathname)
    try {
      const body = await readBody(req)
      const info: RequestInfo = { method: req.method ?? 'GET', bucket, key, query: url.searchParams, headers: req.headers }
      const injected = fault?.(info)
      if (injected && !injected.afterApplying) throw new S3Error(injected.status, injected.code, injected.message ?? injected.code)
      verifyChecksums(req, body)
      const reply = route(info, body)
      if (injected) throw new S3Error(injected.status, injected.code, injected.message ?? injected.code)
      res.writeHead(reply.status, reply.headers)
      res.end(req.method === 'HEAD' ? undefined : reply.body)
    } catch (caught) {
      const error =
        caught instanceof S3Error ? caught : new S3Error(500, 'InternalError', 'We encountered an internal error. Please try again.')
      res.writeHead(error.status, { 'content-type': 'application/xml' })
      if (req.method === 'HEAD') {
        res.end()
        return
      }
      const detail = elements({ Code: error.code, Message: error.message, ...error.detail, RequestId: requestId, HostId: 'local' })
      res.end(`${XML_HEADER}<Error>${detail}</Error>`)
    }
  }

  interface Reply {
    status: number
    headers: Record<string, string | number>
    body?: Buffer | string
  }

  function route(request: RequestInfo, body: Buffer): Reply {
    const { method, bucket, key, query } = request
    if (!bucket) throw notImplemented('ListBuckets')
    if (key === undefined) {
      if (method === 'PUT' && query.size === 0) return createBucket(bucket)
      const objects = bucketOf(bucket)
      if (method === 'HEAD' && query.size === 0) return { status: 200, headers: {} }
      if (method === 'DELETE' && query.size === 0) {
        if (objects.size > 0)
          throw new S3Error(409, 'BucketNotEmpty', 'The bucket you tried to delete is not empty', { BucketName: bucket })
        buckets.delete(bucket)
        return { status: 204, headers: {} }
      }
      if (method === 'GET' && query.get('list-type') === '2') return listObjectsV2(bucket, objects, query)
      if (method === 'POST' && query.has('delete')) return deleteObjects(objects, body)
      throw notImplemented(`${method} on a bucket with ${[...query.keys()].join(', ') || 'no parameters'}`)
    }
    const objects = bucketOf(bucket)
    const unknown = [...query.keys()].filter((name) => name !== 'x-id')
    if (unknown.length > 0) throw notImplemented(`object sub-resources ${unknown.join(', ')}`)
    if (method === 'PUT') return putObject(objects, key, request.headers, body)
    if (method === 'GET' || method === 'HEAD') return getObject(objects, key, request.headers)
    if (method === 'DELETE') {
      if (request.headers['if-match'] !== undefined) throw notImplemented('If-Match on DeleteObject')
      objects.delete(key)
      return { status: 204, headers: {} }
    }
    throw notImplemented(`${method} on an object`)
  }

  function bucketOf(name: string): Map<string, StoredObject> {
    const objects = buckets.get(name)
    if (!objects) throw new S3Error(404, 'NoSuchBucket', 'The specified bucket does not exist', { BucketName: name })
    return objects
  }

  function createBucket(name: string): Reply {
    if (buckets.has(name)) {
      throw new S3Error(
        409,
        'BucketAlreadyOwnedByYou',
        'Your previous request to create the named bucket succeeded and you already own it.',
        { BucketName: name },
      )
    }
    buckets.set(name, new Map())
    return { status: 200, headers: { location: `/${name}` } }
  }

  function putObject(objects: Map<string, StoredObject>, key: string, headers: IncomingMessage['headers'], body: Buffer): Reply {
    if (headers['x-amz-copy-source'] !== undefined) throw notImplemented('CopyObject')
    const ifNoneMatch = headers['if-none-match']
    const ifMatch = headers['if-match']
    if (ifNoneMatch !== undefined && ifMatch !== undefined) throw notImplemented('If-None-Match together with If-Match')
    if (ifNoneMatch !== undefined && ifNoneMatch !== '*') throw notImplemented('If-None-Match with a value other than *')
    // Check and write with no await in between: the event loop is the per-key lock, so
    // of two conditional writes of one key exactly one sees the key free.
    const current = objects.get(key)
    if (ifNoneMatch === '*' && current) {
      throw new S3Error(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', {
        Condition: 'If-None-Match',
      })
    }
    if (ifMatch !== undefined) {
      if (!current) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.', { Key: key })
      if (!etagMatches(ifMatch, current.etag)) {
        throw new S3Error(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', {
          Condition: 'If-Match',
        })
      }
    }
    const etag = `"${createHash('md5').update(body).digest('hex')}"`
    const contentType = headers['content-type'] ?? 'binary/octet-stream'
    objects.set(key, { body, etag, lastModified: new Date(), contentType })
    return { status: 200, headers: { etag } }
  }

  function getObject(objects: Map<string, StoredObject>, key: string, headers: IncomingMessage['headers']): Reply {
    for (const name of ['if-match', 'if-none-match', 'if-modified-since', 'if-unmodified-since', 'range']) {
      if (headers[name] !== undefined) throw notImplemented(`${name} on GetObject`)
    }
    const object = objects.get(key)
    if (!object) throw new S3Error(404, 'NoSuchKey', 'The specified key does not exist.', { Key: key })
    return {
      status: 200,
      headers: {
        etag: object.etag,
        'content-type': object.contentType,
        'content-length': object.body.length,
        'last-modified': object.lastModified.toUTCString(),
        'accept-ranges': 'bytes',
      },
      body: object.body,
    }
  }

  function listObjectsV2(bucket: string, objects: Map<string, StoredObject>, query: URLSearchParams): Reply {
    if (query.has('delimiter')) throw notImplemented('delimiter')
    const encodingType = query.get('encoding-type') ?? undefined
    if (encodingType !== undefined && encodingType !== 'url') {
      throw new S3Error(400, 'InvalidArgument', 'Invalid Encoding Method specified in Request', { ArgumentName: 'encoding-type' })
    }
    const prefix = query.get('prefix') ?? ''
    const startAfter = query.get('start-after') ?? undefined
    const token = query.get('continuation-token') ?? undefined
    const maxKeysText = query.get('max-keys')
    const maxKeys = maxKeysText === null ? MAX_KEYS : Number(maxKeysText)
    if (!Number.isInteger(maxKeys) || maxKeys < 0) {
      throw new S3Error(400, 'InvalidArgument', 'Provided max-keys not an integer or within integer range', { ArgumentName: 'max-keys' })
    }
    // The token wins over start-after, as on AWS: it already lies past it.
    const after = token === undefined ? startAfter : decodeToken(token)
    const afterBytes = after === undefined ? undefined : Buffer.from(after)
    const keys = [...objects.keys()]
      .filter((k) => k.startsWith(prefix) && (afterBytes === undefined || Buffer.compare(Buffer.from(k), afterBytes) > 0))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    const page = keys.slice(0, Math.min(maxKeys, MAX_KEYS))
    const truncated = page.length < keys.length
    const encode = (text: string) => (encodingType === 'url' ? encodeURIComponent(text) : text)
    const contents = page
      .map((k) => {
        const object = objects.get(k)!
        return `<Contents>${elements({
          Key: encode(k),
          LastModified: object.lastModified.toISOString(),
          ETag: object.etag,
          Size: object.body.length,
          StorageClass: 'STANDARD',
        })}</Contents>`
      })
      .join('')
    const head = elements({
      Name: bucket,
      Prefix: encode(prefix),
      StartAfter: startAfter === undefined ? undefined : encode(startAfter),
      ContinuationToken: token,
      NextContinuationToken: truncated ? encodeToken(page[page.length - 1]!) : undefined,
      KeyCount: page.length,
      MaxKeys: maxKeys,
      EncodingType: encodingType,
      IsTruncated: truncated,
    })
    const xml = `${XML_HEADER}<ListBucketResult xmlns="${S3_NAMESPACE}">${head}${contents}</ListBucketResult>`
    return { status: 200, headers: { 'content-type': 'application/xml' }, body: xml }
  }

  function deleteObjects(objects: Map<string, StoredObject>, body: Buffer): Reply {
    const xml = body.toString('utf8')
    if (!/<Delete[\s>]/.test(xml)) {
      throw new S3Error(400, 'MalformedXML', 'The XML you provided was not well-formed or did not validate against our published schema')
    }
    if (textsOf(xml, 'ETag').length > 0) throw notImplemented('conditional DeleteObjects (ETag)')
    const keys = textsOf(xml, 'Key')
    if (keys.length > 1000) throw new S3Error(400, 'MalformedXML', 'A DeleteObjects request can name at most 1000 keys')
    const quiet = textsOf(xml, 'Quiet')[0] === 'true'
    for (const k of keys) objects.delete(k)
    const deleted = quiet ? '' : keys.map((k) => `<Deleted>${elements({ Key: k })}</Deleted>`).join('')
    const out = `${XML_HEADER}<DeleteResult xmlns="${S3_NAMESPACE}">${deleted}</DeleteResult>`
    return { status: 200, headers: { 'content-type': 'application/xml' }, body: out }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo

  return {
    endpoint: `http://127.0.0.1:${port}`,
    get requestCount() {
      return requestCount
    },
    setFault(rule) {
      fault = rule
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      }),
  }
}

/** `/bucket/some/key` → ['bucket', 'some/key']; `/bucket` or `/bucket/` → ['bucket', undefined]. */
function splitPath(pathname: string): [string | undefined, string | undefined] {
  const rest = pathname.slice(1)
  if (rest === '') return [undefined, undefined]
  const slash = rest.indexOf('/')
  if (slash === -1) return [decodeURIComponent(rest), undefined]
  const key = rest.slice(slash + 1)
  return [decodeURIComponent(rest.slice(0, slash)), key === '' ? undefined : decodeURIComponent(key)]
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function verifyChecksums(req: IncomingMessage, body: Buffer): void {
  const headers = req.headers
  if (String(headers['content-encoding'] ?? '').includes('aws-chunked')) throw notImplemented('aws-chunked bodies')
  const sha = headers['x-amz-content-sha256']
  if (typeof sha === 'string' && /^[0-9a-f]{64}$/.test(sha) && createHash('sha256').update(body).digest('hex') !== sha) {
    throw new S3Error(400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed.")
  }
  const md5 = headers['content-md5']
  if (typeof md5 === 'string' && createHash('md5').update(body).digest('base64') !== md5) {
    throw new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.')
  }
  const crc = headers['x-amz-checksum-crc32']
  if (typeof crc === 'string') {
    const computed = Buffer.alloc(4)
    computed.writeUInt32BE(crc32(body))
    if (computed.toString('base64') !== crc)
      throw new S3Error(400, 'BadDigest', 'The CRC32 you specified did not match the calculated checksum.')
  }
  for (const name of Object.keys(headers)) {
    if (name.startsWith('x-amz-checksum-') && name !== 'x-amz-checksum-crc32' && name !== 'x-amz-checksum-mode') {
      throw notImplemented(`checksum header ${name}`)
    }
  }
}

/** RFC 7232 comparison of an If-Match list against a stored (quoted) ETag. */
function etagMatches(header: string, etag: string): boolean {
  return header
    .split(',')
    .map((part) => part.trim())
    .some((part) => part === '*' || part === etag || `"${part}"` === etag)
}

// Opaque to clients, as AWS's are; here simply the last key returned.
function encodeToken(lastKey: string): string {
  return Buffer.from(`v1:${lastKey}`, 'utf8').toString('base64url')
}

function decodeToken(token: string): string {
  const text = Buffer.from(token, 'base64url').toString('utf8')
  if (!text.startsWith('v1:')) {
    throw new S3Error(400, 'InvalidArgument', 'The continuation token provided is incorrect', { ArgumentName: 'continuation-token' })
  }
  return text.slice(3)
}
