import type { LogRecord, StoreLimits } from '../contract/types.js'
import { jsonBytes } from '../json/check-json.js'

/**
 * Cuts records into appends the store accepts (its `maxBatchRecords` and `maxBatchBytes`),
 * in order. A record over `maxRecordBytes` is left for the store to refuse with
 * `RECORD_TOO_LARGE`, in a batch of its own.
 */
export function batchesOf(records: readonly LogRecord[], limits: StoreLimits): LogRecord[][] {
  const maxRecords = limits.maxBatchRecords ?? Number.POSITIVE_INFINITY
  const batches: LogRecord[][] = []
  let batch: LogRecord[] = []
  let bytes = 0
  for (const record of records) {
    const size = jsonBytes(record)
    if (batch.length > 0 && (batch.length >= maxRecords || bytes + size > limits.maxBatchBytes)) {
      batches.push(batch)
      batch = []
      bytes = 0
    }
    batch.push(record)
    bytes += size
  }
  if (batch.length > 0) batches.push(batch)
  return batches
}
