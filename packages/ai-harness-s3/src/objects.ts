import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import {
  DEFAULT_RETRIES,
  HarnessError,
  isHarnessError,
  type StoreRetryOptions,
  withRequestDeadline,
  withRetry,
} from '@tanstack/ai-harness/store'
import { isNotFound, isPreconditionFailure, isTransientS3Error } from './s3-errors.js'

/** Default deadline of one request (one try), in ms, the body's download included. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000

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

// long: the S3 requests share one retrying runner and the bucket; each request is a few lines
/**
 * The handful of S3 requests the store makes. Each try has a deadline (a half-open
 * connection cannot hang it); each is retried on transient failures (throttling, 5xx,
 * timeouts, lost connections) with backoff and jitter, and what is left after the retries
 * ends as `STORE_UNAVAILABLE` with the SDK's error as its cause. A lost precondition comes
 * back as a value, never as a retry, so the caller reads again and decides.
 */
export function objectIO(client: S3Client, bucket: string, retry: StoreRetryOptions = {}, requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS) {
  const isTransient = retry.isTransient ?? isTransientS3Error
  const run = async <T>(fn: (abortSignal: AbortSignal) => Promise<T>): Promise<T> => {
    try {
      return await withRetry(() => withRequestDeadline('S3', requestTimeoutMs, fn), { ...retry, isTransient })
    } catch (error) {
      // Answers the callers read: a lost race, a missing key.
      if (isHarnessError(error) || isPreconditionFailure(error) || isNotFound(error)) throw error
      throw unavailable(error, isTransient(error), retry.retries ?? DEFAULT_RETRIES)
    }
  }

  /** PUT with a precondition; `undefined` when the precondition failed. */
  async function putConditional(key: string, body: string, condition: { ifNoneMatch: '*' } | { ifMatch: string }) {
    try {
      const out = await run((abortSignal) =>
        client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: key,
            Body: body,
            ContentType: 'application/json',
            ...('ifMatch' in condition ? { IfMatch: condition.ifMatch } : { IfNoneMatch: '*' }),
          }),
          { abortSignal },
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
      await run((abortSignal) =>
        client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json' }), { abortSignal }),
      )
    },

    async get(key: string): Promise<StoredText | undefined> {
      try {
        // The body's download is part of the try: a connection that stalls mid-body times out too.
        return await run(async (abortSignal) => {
          const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }), { abortSignal })
          const stream = out.Body as { destroy?: () => void } | undefined
          const stop = () => stream?.destroy?.()
          abortSignal.addEventListener('abort', stop, { once: true })
          try {
            const body = (await out.Body?.transformToString('utf8')) ?? ''
            return { body, etag: out.ETag ?? '' }
          } finally {
            abortSignal.removeEventListener('abort', stop)
          }
        })
      } catch (error) {
        if (isNotFound(error)) return undefined
        throw error
      }
    },

    /** The ETag and size of `key`, without its body; `undefined` when it does not exist. */
    async head(key: string): Promise<{ etag: string; size: number } | undefined> {
      try {
        const out = await run((abortSignal) => client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal }))
        return { etag: out.ETag ?? '', size: out.ContentLength ?? 0 }
      } catch (error) {
        if (isNotFound(error)) return undefined
        throw error
      }
    },

    /** Keys under `prefix` in S3's order, after `startAfter`, page by page (1000 a request). */
    async *list(prefix: string, startAfter?: string): AsyncGenerator<Listed[]> {
      let token: string | undefined
      do {
        const out = await run((abortSignal) =>
          client.send(
            new ListObjectsV2Command({
              Bucket: bucket,
              Prefix: prefix,
              ...(token ? { ContinuationToken: token } : startAfter ? { StartAfter: startAfter } : {}),
            }),
            { abortSignal },
          ),
        )
        const page: Listed[] = []
        for (const item of out.Contents ?? []) if (item.Key) page.push({ key: item.Key, etag: item.ETag ?? '', size: item.Size ?? 0 })
        yield page
        token = out.IsTruncated ? out.NextContinuationToken : undefined
      } while (token)
    },

    async delete(key: string): Promise<void> {
      await run((abortSignal) => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), { abortSignal }))
    },

    /** Deletes up to 1000 keys in one request; fails if S3 reports any key it could not delete. */
    async deleteMany(keys: readonly string[]): Promise<void> {
      if (keys.length === 0) return
      const out = await run((abortSignal) =>
        client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }), {
          abortSignal,
        }),
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

function unavailable(error: unknown, transient: boolean, retries: number): HarnessError {
  const e = error as { name?: string; message?: string } | undefined
  const what = `${e?.name ?? typeof error}: ${e?.message ?? String(error)}`
  if (transient) {
    return new HarnessError(
      'STORE_UNAVAILABLE',
      `S3 kept failing after ${retries + 1} tries (${what}). Check that it is reachable; after a failed append, read the log back before deciding to write again.`,
      { cause: error },
    )
  }
  return new HarnessError(
    'STORE_UNAVAILABLE',
    `S3 refused the request (${what}). Check the bucket, endpoint, region, credentials and permissions of the store's client.`,
    { cause: error },
  )
}

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
