import { type LogRecord, utf8Length } from '@tanstack/ai-harness/store'

/** A record whose JSON is exactly `bytes` long (UTF-8), padded with `fill`. */
export function sizedRecord(bytes: number, fill = 'x'): LogRecord {
  const base = JSON.stringify({ type: 't', pad: '' })
  const fillBytes = utf8Length(fill)
  const room = bytes - utf8Length(base)
  if (room < 0) throw new Error(`cannot build a record of ${bytes} bytes`)
  const count = Math.floor(room / fillBytes)
  const pad = fill.repeat(count) + 'x'.repeat(room - count * fillBytes)
  return { type: 't', pad }
}

/** Records of at most `maxRecord` bytes whose sizes add up to exactly `total`. */
export function sizedBatch(total: number, maxRecord: number): LogRecord[] {
  const minRecord = utf8Length(JSON.stringify({ type: 't', pad: '' }))
  const batch: LogRecord[] = []
  let left = total
  while (left > 0) {
    let size = Math.min(maxRecord, left)
    if (left - size > 0 && left - size < minRecord) size = left - minRecord
    batch.push(sizedRecord(size))
    left -= size
  }
  return batch
}
