import { boundedMap, type LogEntry, type LogRecord } from '@tanstack/ai-harness/store'
import type { Tail } from './keys.js'

/**
 * Where this instance last saw each log end, in its live generation. A value means
 * "a batch ends just before `next` in generation `gen`", a fact that stays true until a
 * `delete` puts tombstones on the generation's slots; so an append at `next` can go
 * straight to one conditional PutItem: if the log moved on, or was deleted, an item
 * already holds that slot and the condition fails.
 */
export class TailCache {
  readonly #tails: Map<string, Tail>
  constructor(maxLogs = 10_000) {
    // Forgetting a tail only costs a tail read on the next append.
    this.#tails = boundedMap(maxLogs)
  }

  get(logId: string): Tail | undefined {
    return this.#tails.get(logId)
  }

  /** The generation to write or read in when nothing better is known: 0, the first. */
  genOf(logId: string): number {
    return this.#tails.get(logId)?.gen ?? 0
  }

  set(logId: string, tail: Tail): void {
    this.#tails.set(logId, tail)
  }

  /** Records a batch boundary seen while reading; keeps the furthest one of the newest generation. */
  note(logId: string, tail: Tail): void {
    const known = this.#tails.get(logId)
    if (!known || known.gen < tail.gen || (known.gen === tail.gen && known.next < tail.next)) this.#tails.set(logId, tail)
  }

  forget(logId: string): void {
    this.#tails.delete(logId)
  }
}

/** Records of one stored batch that a read fetched but did not return yet. */
export interface PendingBatch {
  readonly sk: string
  readonly first: number
  readonly records: LogRecord[]
  /** Size of the batch's stored JSON, for the cache's byte bound. */
  readonly bytes: number
}

/** Where the last page of a log ended, and what it fetched past that. */
export interface ReadPoint {
  readonly gen: number
  /** The seq after the last entry returned; a batch ends just before it unless `batches` holds its rest. */
  next: number
  /** Contiguous batches not returned yet; the first holds `next`. Empty: a batch ends at `next - 1`. */
  batches: PendingBatch[]
}

/** Bytes of fetched records the read-ahead may hold in all, across logs. */
const READ_AHEAD_BYTES = 8 * 1024 * 1024

/**
 * Where the last page of each log ended, with the parsed rest of the batches it fetched
 * but could not return (a page holds at most `limit` entries, a stored batch up to
 * 390 KB of them). The next page of the same log starts there, so a full read parses
 * each stored byte once, and needs no query to find where to start. Each record object
 * is handed out at most once (callers may change what they get), and the reader checks
 * that the generation was not deleted before it uses held records: a deleted log's
 * records never come back from here.
 */
export class ReadAhead {
  readonly #points = new Map<string, ReadPoint>()
  #bytes = 0
  constructor(
    private readonly maxLogs = 1000,
    private readonly maxBytes = READ_AHEAD_BYTES,
  ) {}

  /** The read point of `logId` if its next page starts at `from` in `gen`. */
  at(logId: string, gen: number, from: number): ReadPoint | undefined {
    const point = this.#points.get(logId)
    return point && point.gen === gen && point.next === from ? point : undefined
  }

  /** Hands out up to `limit` held entries from the read point of `logId`, moving it on. */
  take(logId: string, limit: number): LogEntry[] {
    const point = this.#points.get(logId)
    const entries: LogEntry[] = []
    if (!point) return entries
    while (entries.length < limit && point.batches.length > 0) {
      const batch = point.batches[0]!
      const index = point.next - batch.first
      const end = Math.min(batch.records.length, index + (limit - entries.length))
      for (let i = index; i < end; i++) entries.push({ seq: batch.first + i, record: batch.records[i]! })
      point.next = batch.first + end
      if (end === batch.records.length) {
        point.batches.shift()
        this.#bytes -= batch.bytes
      }
    }
    return entries
  }

  /** Sets where the last page of `logId` ended, with what it fetched past that. */
  keep(logId: string, point: ReadPoint): void {
    this.forget(logId)
    this.#points.set(logId, point)
    this.#bytes += weight(point)
    // Oldest first in a Map: drop the least recently read logs past either bound.
    for (const [oldest, dropped] of this.#points) {
      if (this.#points.size <= this.maxLogs && this.#bytes <= this.maxBytes) break
      if (oldest === logId) continue
      this.#points.delete(oldest)
      this.#bytes -= weight(dropped)
    }
  }

  forget(logId: string): void {
    const point = this.#points.get(logId)
    if (!point) return
    this.#points.delete(logId)
    this.#bytes -= weight(point)
  }
}

const weight = (point: ReadPoint) => point.batches.reduce((sum, batch) => sum + batch.bytes, 0)
