import type { LogRecord, StoreLimits } from '../contract/types.js'
import { jsonBytes } from '../json/check-json.js'
import type { JsonObject } from '../json/json-types.js'
import { chunkRecord, chunksRecord } from './stream-log.js'

/** Room left in a batch record for its type and the store's own framing. */
const RECORD_OVERHEAD_BYTES = 256

/**
 * The records of an append of `chunks`, in order: one chunk record for a lone chunk (or a
 * chunk too large to share a record), else batch records each as large as the store's record
 * and batch limits allow. A chunk over `maxRecordBytes` is left for the store to refuse
 * with `RECORD_TOO_LARGE`.
 */
export function chunkRecords(chunks: readonly JsonObject[], limits: StoreLimits): LogRecord[] {
  if (chunks.length === 1) return [chunkRecord(chunks[0]!)]
  const room = Math.min(limits.maxRecordBytes, limits.maxBatchBytes) - RECORD_OVERHEAD_BYTES
  // The usual batch fits one record: one measure of the whole, not one per chunk.
  if (jsonBytes(chunks) <= room) return [chunksRecord([...chunks])]
  const records: LogRecord[] = []
  let group: JsonObject[] = []
  let bytes = 0
  const flush = () => {
    if (group.length === 1) records.push(chunkRecord(group[0]!))
    else if (group.length > 1) records.push(chunksRecord(group))
    group = []
    bytes = 0
  }
  for (const chunk of chunks) {
    const size = jsonBytes(chunk) + 1
    if (group.length > 0 && bytes + size > room) flush()
    group.push(chunk)
    bytes += size
  }
  flush()
  return records
}

/**
 * Cuts records into appends the store accepts (its `maxBatchRecords` and `maxBatchBytes`),
 * in order. A record over `maxRecordBytes` is left for the store to refuse with
 * `RECORD_TOO_LARGE`, in a batch of its own.
 */
export function batchesOf(records: readonly LogRecord[], limits: StoreLimits): LogRecord[][] {
  // One record is one append: a record too large for a batch is the store's to refuse.
  if (records.length === 1) return [[records[0]!]]
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
