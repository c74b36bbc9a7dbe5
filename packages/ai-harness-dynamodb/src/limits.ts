import type { StoreLimits } from '@tanstack/ai-harness/store'
import { MAX_PARTITION_KEY_BYTES } from './keys.js'

/** DynamoDB's item size limit: 400 KB, counting attribute names and values. */
export const DYNAMODB_MAX_ITEM_BYTES = 400 * 1024

/**
 * What one append may hold. A batch is one item: its records' JSON joined into one
 * string (one byte per record for `,` and two for `[ ]`), plus the keys (a partition key
 * of up to 2048 bytes), the count and the attribute names. The numbers leave room for
 * all of that under DynamoDB's 400 KB.
 */
export const DYNAMODB_DEFAULT_LIMITS: StoreLimits = {
  maxRecordBytes: 390_000,
  maxBatchBytes: 390_000,
  maxBatchRecords: 10_000,
}

/** Bytes an item can take beyond its records' JSON: names, keys, count, separators. */
export function itemOverheadBytes(limits: StoreLimits): number {
  const names = 2 + 2 + 1 + 1
  const sortKey = 18
  const count = 21
  const separators = (limits.maxBatchRecords ?? limits.maxBatchBytes) + 1
  // A log's first batch also carries its keys in the sessions index: `ls` (`s|` + the
  // namespace prefix) and `lid` (the log id), together at most the partition key and 2.
  const sessionKeys = 2 + 3 + 2 + MAX_PARTITION_KEY_BYTES
  return names + MAX_PARTITION_KEY_BYTES + sortKey + count + separators + sessionKeys
}
