/**
 * @tanstack/ai-harness-dynamodb — the harness store on DynamoDB, with the AWS SDK v3.
 * @packageDocumentation
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb'
import {
  assertLogId,
  type Clock,
  type HarnessStore,
  type LeaseStore,
  type SessionListStore,
  type StoreLimits,
  type StoreRetryOptions,
  systemClock,
  type WakeupStore,
} from '@tanstack/ai-harness/store'
import { appendBatch } from './append.js'
import { ReadAhead, TailCache } from './caches.js'
import { deleteLog } from './delete.js'
import { keyLayout } from './keys.js'
import { dynamoLeases } from './leases.js'
import { checkStoreOptions, storeLimits } from './options.js'
import { readEntries } from './read.js'
import { retryingSender } from './send.js'
import { dynamoSessions } from './sessions.js'
import { DEFAULT_TABLE_NAME } from './table.js'
import { dynamoWakeups } from './wakeups.js'

export { createHarnessTable, DEFAULT_TABLE_NAME, harnessTableDefinition, type CreateHarnessTableOptions } from './table.js'
export { DYNAMODB_DEFAULT_LIMITS, DYNAMODB_MAX_ITEM_BYTES } from './limits.js'
export { deleteNamespace, dumpNamespace, scanNamespace, type NamespaceOptions } from './namespace.js'
export { isConditionFailed, isTransientDynamoError } from './transient.js'
export { DEFAULT_REQUEST_TIMEOUT_MS } from './send.js'
export { ATTR, SESSION_INDEX, WAKEUP_INDEX } from './keys.js'

export interface DynamoDbStoreOptions {
  /** The table, created with {@link createHarnessTable} or from {@link harnessTableDefinition}. Default `ai-harness`. */
  tableName?: string
  /**
   * Prefix of every key this store writes. Stores on different namespaces share the
   * table but never see each other's sessions, leases or wakeups. Default `''`.
   */
  namespace?: string
  /**
   * A client you own (the store never destroys it). Give it `maxAttempts: 1` so the
   * store's own retry (backoff, jitter, conflict-aware) is the only one.
   */
  client?: DynamoDBClient
  /** Config for a client the store creates, owns and destroys on `close()`; `maxAttempts` defaults to 1. */
  clientConfig?: DynamoDBClientConfig
  /** Time for leases and wakeups. Default: the system clock. */
  clock?: Clock
  /**
   * Smaller limits than the defaults (larger ones are refused: a batch must fit in a 400 KB
   * item). `maxLogIdBytes` defaults to what DynamoDB's 2048-byte partition key leaves after
   * the namespace.
   */
  limits?: Partial<StoreLimits>
  /** Retry of throttling, 5xx, timeouts and lost connections. Default: 5 retries, 20 ms to 2 s backoff with full jitter. */
  retry?: StoreRetryOptions
  /**
   * Deadline of each request (each try), in ms: a try with no answer by then is abandoned
   * (its socket closed) and counts as a transient failure, so it is retried, and after the
   * retries the call fails with `STORE_UNAVAILABLE`. Default {@link DEFAULT_REQUEST_TIMEOUT_MS} (5 s).
   */
  requestTimeoutMs?: number
}

/** The DynamoDB store: log, leases, wakeups and session listings, all in one table. */
export type DynamoDbStore = HarnessStore & {
  readonly leases: LeaseStore
  readonly wakeups: WakeupStore
  readonly sessions: SessionListStore
  readonly tableName: string
  readonly namespace: string
  /** The client the store sends through. */
  readonly client: DynamoDBClient
  close(): Promise<void>
}

/**
 * Opens a harness store on a DynamoDB table:
 *
 * ```ts
 * const store = dynamoDbStore({ tableName: 'ai-harness', clientConfig: { region: 'eu-west-1' } })
 * ```
 *
 * Each append is one conditional PutItem; reads are strongly consistent queries;
 * leases and wakeups are conditional updates. Every request has a deadline; transient
 * failures are retried with backoff and jitter, and what remains ends as
 * `STORE_UNAVAILABLE`; a failed condition is a conflict and is never retried. Options are
 * checked here: a wrong one is `INVALID_ARGUMENT` naming it.
 */
export function dynamoDbStore(options: DynamoDbStoreOptions = {}): DynamoDbStore {
  checkStoreOptions(options)
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME
  const namespace = options.namespace ?? ''
  const keys = keyLayout(namespace)
  const limits = storeLimits(options.limits, keys.maxLogIdBytes)
  const owned = options.client === undefined
  // The store retries itself; SDK retries on top would multiply the attempts.
  const client = options.client ?? new DynamoDBClient({ maxAttempts: 1, ...options.clientConfig })
  const send = retryingSender(client, { retry: options.retry, requestTimeoutMs: options.requestTimeoutMs })
  const clock = options.clock ?? systemClock
  const log = { tableName, keys, limits, send, tails: new TailCache(), ahead: new ReadAhead() }
  const leases = dynamoLeases({ tableName, keys, limits, send, clock })
  const wakeups = dynamoWakeups({ tableName, keys, limits, send, clock })

  return {
    tableName,
    namespace,
    client,
    limits,
    leases,
    wakeups,
    sessions: dynamoSessions({ tableName, keys, send }),
    // Appends are not fenced: DynamoDB cannot check the lease item in the same write
    // (no transactions here), so `options.lease` is ignored and the seq check guards the log.
    append: (logId, expectedSeq, records) => appendBatch(log, logId, expectedSeq, records),
    read: (logId, readOptions) => readEntries(log, logId, readOptions),
    async delete(logId) {
      assertLogId(logId, limits)
      await deleteLog(log, logId)
      await leases.end(logId)
      await wakeups.cancel(logId)
    },
    async close() {
      if (owned) client.destroy()
    },
  }
}
