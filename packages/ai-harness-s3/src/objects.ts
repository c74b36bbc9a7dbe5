import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { HarnessError, type RetryOptions, withRetry } from '@tanstack/ai-harness/store'
import { isNotFound, isPreconditionFailure, isTransientS3Error } from './s3-errors.js'

/** A stored object's text and ETag. */
export interface StoredText {
  readonly body: string
  readonly etag: string
}

/** One key of a listing. */
export interface Listed {
  readonly key: string
  readonly etag: string
  /** Bytes of the object, as listed. */
  readonly size: number
}

export type RetrySettings = Omit<RetryOptions, 'isTransient'>

/**
 * The handful of S3 requests the store makes. Each is retried on transient failures
 * (throttling, 5xx, lost connections) with backoff and jitter; a lost precondition comes
 * back as a value, never as a retry, so the caller reads again and decides.
 */
export function objectIO(client: S3Client, bucket: string, retry: RetrySettings = {}) {
  const run = <T>(fn: () => Promise<T>) => withRetry(fn, { ...retry, isTransient: isTransientS3Error })

  /** PUT with a precondition; `undefined` when the precondition failed. */
  async function putConditional(key: string, body: string, condition: { ifNoneMatch: '*' } | { ifMatch: string }) {
    try {
      const out = await run(() =>
        client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: body,
            ContentType: 'application/json',
            ...('ifMatch' in condition ? { IfMatch: condition.ifMatch } : { IfNoneMatch: '*' }),
          }),
        ),
      )
      return { etag: out.ETag ?? '' }
    } catch (error) {
      // If-Match on a key deleted meanwhile is a 404 on AWS: the state moved all the same.
      if (isPreconditionFailure(error) || ('ifMatch' in condition && isNotFound(error))) return undefined
      throw error
    }
  }

  return {
    /** Creates `key` only if it does not exist (`If-None-Match: *`). */
    putIfAbsent: (key: string, body: string) => putConditional(key, body, { ifNoneMatch: '*' }),
    /** Replaces `key` only if its ETag is still `etag` (`If-Match`). */
    putIfMatch: (key: string, body: string, etag: string) => putConditional(key, body, { ifMatch: etag }),

    /** Unconditional PUT, for keys that are unique to the writer. */
    async put(key: string, body: string): Promise<void> {
      await run(() => client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json' })))
    },

    async get(key: string): Promise<StoredText | undefined> {
      try {
        return await run(async () => {
          const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
          const body = (await out.Body?.transformToString('utf8')) ?? ''
          return { body, etag: out.ETag ?? '' }
        })
      } catch (error) {
        if (isNotFound(error)) return undefined
        throw error
      }
    },

    /** Keys under `prefix` in S3's order, after `startAfter`, page by page (1000 a request). */
    async *list(prefix: string, startAfter?: string): AsyncGenerator<Listed[]> {
      let token: string | undefined
      do {
        const out = await run(() =>
          client.send(
            new ListObjectsV2Command({
              Bucket: bucket,
              Prefix: prefix,
              ...(token ? { ContinuationToken: token } : startAfter ? { StartAfter: startAfter } : {}),
            }),
          ),
        )
        const page: Listed[] = []
        for (const item of out.Contents ?? []) if (item.Key) page.push({ key: item.Key, etag: item.ETag ?? '', size: item.Size ?? 0 })
        yield page
        token = out.IsTruncated ? out.NextContinuationToken : undefined
      } while (token)
    },

    async delete(key: string): Promise<void> {
      await run(() => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })))
    },

    /** Deletes up to 1000 keys in one request; fails if S3 reports any key it could not delete. */
    async deleteMany(keys: readonly string[]): Promise<void> {
      if (keys.length === 0) return
      const out = await run(() =>
        client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } })),
      )
      const failed = out.Errors ?? []
      if (failed.length > 0) {
        throw new HarnessError(
          'STORE_UNAVAILABLE',
          `S3 could not delete ${failed.length} object(s), e.g. ${failed[0]?.Key} (${failed[0]?.Code}). Call delete again; it is safe to repeat.`,
        )
      }
    },
  }
}

export type ObjectIO = ReturnType<typeof objectIO>

/** Runs `fn` over `items` with at most `limit` in flight, keeping order in the result. */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await fn(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return results
}
