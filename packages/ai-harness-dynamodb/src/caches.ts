import type { LogEntry, LogRecord } from '@tanstack/ai-harness'
import type { Tail } from './batches.js'

/** A Map that forgets its least recently set entry past `max`: the caches only save requests. */
class Bounded<V> {
  readonly #map = new Map<string, V>()
  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    return this.#map.get(key)
  }

  set(key: string, value: V): void {
    this.#map.delete(key)
    this.#map.set(key, value)
    if (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value!)
  }

  delete(key: string): void {
    this.#map.delete(key)
  }
}

/**
 * Where this instance last saw each log end, in its live generation. A value means
 * "a batch ends just before `next` in generation `gen`", a fact that stays true until a
 * `delete` puts tombstones on the generation's slots; so an append at `next` can go
 * straight to one conditional PutItem: if the log moved on, or was deleted, an item
 * already holds that slot and the condition fails.
 */
export class TailCache {
  readonly #tails: Bounded<Tail>
  constructor(maxLogs = 10_000) {
    this.#tails = new Bounded(maxLogs)
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
}

interface Pending {
  readonly gen: number
  /** The seq of the first record not returned yet. */
  next: number
  /** Contiguous batches; the first holds `next`. */
  batches: PendingBatch[]
}

/**
 * The parsed rest of the batches the last page of a log fetched but could not return
 * (a page holds at most `limit` entries, a stored batch up to 390 KB of them). The next
 * page of the same log starts there, so a full read parses each stored byte once
 * instead of once per page. Each record object is handed out at most once (callers may
 * change what they get), and the reader uses it only after a fresh query shows the batch
 * is still there: a deleted log's records never come back from here.
 */
export class ReadAhead {
  readonly #logs: Bounded<Pending>
  constructor(maxLogs = 4) {
    this.#logs = new Bounded(maxLogs)
  }

  /** The stored batch key that holds `from`, if the read ahead of `logId` starts exactly there. */
  skAt(logId: string, gen: number, from: number): string | undefined {
    const pending = this.#logs.get(logId)
    return pending && pending.gen === gen && pending.next === from ? pending.batches[0]?.sk : undefined
  }

  /** Hands out up to `limit` entries from `from` (call after `skAt` was confirmed). Returns them and the seq after them. */
  take(logId: string, limit: number): { entries: LogEntry[]; next: number } {
    const pending = this.#logs.get(logId)
    const entries: LogEntry[] = []
    if (!pending) return { entries, next: 0 }
    while (entries.length < limit && pending.batches.length > 0) {
      const batch = pending.batches[0]!
      const index = pending.next - batch.first
      const end = Math.min(batch.records.length, index + (limit - entries.length))
      for (let i = index; i < end; i++) entries.push({ seq: batch.first + i, record: batch.records[i]! })
      pending.next = batch.first + end
      if (end === batch.records.length) pending.batches.shift()
    }
    if (pending.batches.length === 0) this.#logs.delete(logId)
    return { entries, next: pending.next }
  }

  /** Keeps what a page fetched past its end, from seq `next`. */
  keep(logId: string, gen: number, next: number, batches: PendingBatch[]): void {
    if (batches.length === 0) this.#logs.delete(logId)
    else this.#logs.set(logId, { gen, next, batches })
  }

  forget(logId: string): void {
    this.#logs.delete(logId)
  }
}
