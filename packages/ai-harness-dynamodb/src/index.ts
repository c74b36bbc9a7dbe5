/**
 * @tanstack/ai-harness-dynamodb — the harness store on DynamoDB, with the AWS SDK v3.
 * @packageDocumentation
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb'
import {
  assertLogId,
  type Clock,
  DEFAULT_MAX_LOG_ID_BYTES,
  HarnessError,
  type HarnessStore,
  type LeaseStore,
  type StoreLimits,
  systemClock,
  utf8Length,
  type WakeupStore,
} from '@tanstack/ai-harness/store'
import { keyLayout, MAX_PARTITION_KEY_BYTES } from './keys.js'
import { dynamoLeases } from './leases.js'
import { DYNAMODB_DEFAULT_LIMITS, DYNAMODB_MAX_ITEM_BYTES, itemOverheadBytes } from './limits.js'
import { appendBatch, deletePartition, readEntries, TailCache } from './log.js'
import { DEFAULT_TABLE_NAME } from './table.js'
import { type DynamoRetryOptions, retryingSender } from './transient.js'
import { dynamoWakeups } from './wakeups.js'

export { createHarnessTable, DEFAULT_TABLE_NAME, harnessTableDefinition, type CreateHarnessTableOptions } from './table.js'
export { DYNAMODB_DEFAULT_LIMITS, DYNAMODB_MAX_ITEM_BYTES } from './limits.js'
export { deleteNamespace, dumpNamespace, scanNamespace, type NamespaceOptions } from './namespace.js'
export { isConditionFailed, isTransientDynamoError, type DynamoRetryOptions } from './transient.js'
export { ATTR, WAKEUP_INDEX } from './keys.js'

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
  /** Smaller limits than the defaults; larger ones must still fit in a 400 KB item. */
  limits?: Partial<StoreLimits>
  /** Retry of throttling, 5xx and lost connections. Default: 5 retries, 20 ms to 2 s backoff with full jitter. */
  retry?: DynamoRetryOptions
}

/** The DynamoDB store: log, leases and wakeups, all in one table. */
export type DynamoDbStore = HarnessStore & {
  readonly leases: LeaseStore
  readonly wakeups: WakeupStore
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
 * leases and wakeups are conditional updates. Transient failures are retried with
 * backoff and jitter; a failed condition is a conflict and is never retried.
 */
export function dynamoDbStore(options: DynamoDbStoreOptions = {}): DynamoDbStore {
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME
  const namespace = options.namespace ?? ''
  const limits: StoreLimits = { ...DYNAMODB_DEFAULT_LIMITS, ...options.limits }
  if (limits.maxBatchBytes + itemOverheadBytes(limits) > DYNAMODB_MAX_ITEM_BYTES || !(limits.maxRecordBytes > 0)) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `limits do not fit in a DynamoDB item: keep maxBatchBytes at most ${DYNAMODB_DEFAULT_LIMITS.maxBatchBytes} and maxBatchRecords at most ${DYNAMODB_DEFAULT_LIMITS.maxBatchRecords}.`,
    )
  }
  const keys = keyLayout(namespace)
  if (utf8Length(keys.prefix) + (limits.maxLogIdBytes ?? DEFAULT_MAX_LOG_ID_BYTES) > MAX_PARTITION_KEY_BYTES) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `The namespace and limits.maxLogIdBytes do not fit DynamoDB's ${MAX_PARTITION_KEY_BYTES}-byte partition key: keep the namespace (URL-encoded, ${utf8Length(keys.prefix)} bytes with its separator) plus maxLogIdBytes (${limits.maxLogIdBytes}) within it.`,
    )
  }
  const owned = options.client === undefined
  // The store retries itself; SDK retries on top would multiply the attempts.
  const client = options.client ?? new DynamoDBClient({ maxAttempts: 1, ...options.clientConfig })
  const send = retryingSender(client, options.retry)
  const clock = options.clock ?? systemClock
  const tails = new TailCache()
  const log = { tableName, keys, limits, send, tails }

  return {
    tableName,
    namespace,
    client,
    limits,
    leases: dynamoLeases({ tableName, keys, send, clock, limits }),
    wakeups: dynamoWakeups({ tableName, keys, send, clock, limits }),
    append: (logId, expectedSeq, records) => appendBatch(log, logId, expectedSeq, records),
    read: (logId, readOptions) => readEntries(log, logId, readOptions),
    async delete(logId) {
      assertLogId(logId, limits)
      tails.forget(logId)
      await deletePartition(log, keys.pk(logId))
      tails.forget(logId)
    },
    async close() {
      if (owned) client.destroy()
    },
  }
}
