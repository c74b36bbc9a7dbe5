/**
 * @tanstack/ai-harness-s3 — the harness store on S3 (or any S3-compatible service with
 * conditional writes), through `@aws-sdk/client-s3`.
 * @packageDocumentation
 */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import {
  assertLogId,
  type Clock,
  DEFAULT_STORE_LIMITS,
  type HarnessStore,
  type LeaseStore,
  type SessionListStore,
  type StoreLimits,
  type StoreRetryOptions,
  systemClock,
  type WakeupStore,
} from '@tanstack/ai-harness/store'
import { keyLayout } from './keys.js'
import { leaseStore } from './leases.js'
import { logStore } from './log.js'
import { objectIO } from './objects.js'
import { checkStoreOptions, storeLimits } from './options.js'
import { s3Sessions } from './sessions.js'
import { wakeupStore } from './wakeups.js'

export interface S3StoreOptions {
  /** The bucket. It must exist; the store never creates or deletes buckets. */
  bucket: string
  /**
   * Every key the store writes starts with this (a `/` is added when missing). Give each
   * app, environment or test its own.
   */
  prefix?: string
  /**
   * A client to use. The store does not destroy it on `close`. Its own retries add to the
   * store's, so give it `maxAttempts: 1`.
   */
  client?: S3Client
  /**
   * Or the configuration of a client the store makes (and destroys on `close`): one
   * connection pool per store. The store sets `maxAttempts: 1` unless you do, because it
   * retries transient failures itself.
   */
  clientConfig?: S3ClientConfig
  /** Time for leases and wakeups. Default: the wall clock. */
  clock?: Clock
  /**
   * Override the default limits (see `S3_DEFAULT_LIMITS`). `maxLogIdBytes` defaults to what
   * S3's 1024-byte keys leave after the prefix (ids are escaped, at most 3 key bytes a byte).
   */
  limits?: Partial<StoreLimits>
  /** Batch objects fetched at once by a read. Default 8. */
  readConcurrency?: number
  /** Backoff of transient failures (throttling, 5xx, timeouts, lost connections). Default: 5 retries from 20 ms, capped at 2 s. */
  retry?: StoreRetryOptions
  /**
   * Deadline of each request (each try), in ms, a download's body included: a try with no
   * answer by then is abandoned (its socket closed) and counts as a transient failure, so
   * it is retried, and after the retries the call fails with `STORE_UNAVAILABLE`. Default
   * {@link DEFAULT_REQUEST_TIMEOUT_MS} (10 s).
   */
  requestTimeoutMs?: number
}

/**
 * The same limits as the memory and PostgreSQL stores, so an app moving between them
 * meets the same refusals. A batch is one object, far below S3's 5 GB single PUT.
 */
export const S3_DEFAULT_LIMITS: StoreLimits = { ...DEFAULT_STORE_LIMITS }

/** A store on S3: an append-only log, leases and wakeups per session, and session listings. */
export type S3Store = HarnessStore & {
  readonly leases: LeaseStore
  readonly wakeups: WakeupStore
  readonly sessions: SessionListStore
  /** The key prefix this store writes under ('' or ending in `/`). */
  readonly prefix: string
  close(): Promise<void>
}

/**
 * Opens a harness store on an S3 bucket.
 *
 * ```ts
 * const store = s3Store({ bucket: 'my-app', prefix: 'sessions', clientConfig: { region: 'eu-west-1' } })
 * ```
 *
 * Each call is an independent instance (its own caches and, with `clientConfig`, its own
 * client); any number of instances, in any number of processes, may share a prefix.
 */
export function s3Store(options: S3StoreOptions): S3Store {
  checkStoreOptions(options)
  const keys = keyLayout(options.prefix ?? '')
  const limits = storeLimits(S3_DEFAULT_LIMITS, options.limits, keys.maxLogIdBytes)
  const ownsClient = options.client === undefined
  const client = options.client ?? new S3Client({ maxAttempts: 1, ...options.clientConfig })
  const clock = options.clock ?? systemClock
  const io = objectIO(client, options.bucket, options.retry, options.requestTimeoutMs)
  const log = logStore(io, keys, limits, options.readConcurrency ?? 8)
  const leases = leaseStore(io, keys, limits, clock)
  const wakeups = wakeupStore(io, keys, limits, clock)

  return {
    limits,
    leases,
    wakeups,
    sessions: s3Sessions(io, keys),
    prefix: keys.root,
    // Appends are not fenced: S3 cannot check the lease object in the same write, so
    // `options.lease` is ignored and the seq check guards the log.
    append: log.append,
    read: log.read,
    async delete(logId) {
      assertLogId(logId, limits)
      await log.deleteLog(logId)
      await leases.end(logId)
      await wakeups.remove(logId)
    },
    async close() {
      if (ownsClient) client.destroy()
    },
  }
}

export { isTransientS3Error, isPreconditionFailure } from './s3-errors.js'
export { encodeId, keyLayout, type KeyLayout } from './keys.js'
export { DEFAULT_REQUEST_TIMEOUT_MS } from './objects.js'
