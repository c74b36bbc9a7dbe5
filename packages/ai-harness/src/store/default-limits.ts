import type { StoreLimits } from '../contract/types.js'

/**
 * The limits a store declares unless its database holds less (DynamoDB's 400 KB items)
 * or its app lowers them: a record up to 256 KiB, a batch up to 1 MiB, in UTF-8 bytes of
 * JSON. Each store adds the longest log id its keys or indexes keep.
 */
export const DEFAULT_STORE_LIMITS: Readonly<Pick<StoreLimits, 'maxRecordBytes' | 'maxBatchBytes'>> = {
  maxRecordBytes: 256 * 1024,
  maxBatchBytes: 1024 * 1024,
}
