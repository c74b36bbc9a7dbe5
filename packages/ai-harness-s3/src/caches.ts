import { boundedMap } from '@tanstack/ai-harness/store'
import { type Batch, type BatchMeta, type ListedSlot, parseBatch, type Tail } from './batches.js'
import type { ObjectIO, StoredText } from './objects.js'

/** Entries each cache keeps, so a long-lived process does not grow without bound. */
const CACHE_ENTRIES = 10_000
/** Batch bodies kept for re-reads: at most 256 of at most 64 KiB each, 16 MiB in all. */
const BODY_CACHE_ENTRIES = 256
export const BODY_CACHE_MAX_CHARS = 64 * 1024

/** The last batch a read returned whole: a later read after `end` lists from there. */
export interface ReadHint {
  readonly gen: number
  readonly batch: number
  readonly etag: string
  readonly end: number
}

/** A batch as fetched, and whether a request of this call fetched it (it then shows the batch as it is now). */
export interface FetchedBatch {
  readonly batch: Batch
  readonly fresh: boolean
}

/**
 * What one instance remembers of the logs, each cache bounded: the tail of each log (so
 * the hot path of an append is one PUT), what each batch object holds (keyed by key and
 * used only under the ETag a listing shows: a batch object never changes in place but to
 * become a tombstone, which has another ETag), small batch bodies, and read hints.
 */
export class LogCaches {
  readonly tails = boundedMap<string, Tail>(CACHE_ENTRIES)
  readonly hints = boundedMap<string, ReadHint>(CACHE_ENTRIES)
  readonly #metas = boundedMap<string, BatchMeta & { etag: string }>(CACHE_ENTRIES)
  readonly #bodies = boundedMap<string, StoredText>(BODY_CACHE_ENTRIES)

  constructor(private readonly io: ObjectIO) {}

  /** Remembers a batch this instance wrote or read, under its ETag. */
  noteBatch(key: string, stored: StoredText, meta: BatchMeta): void {
    this.#metas.set(key, { seq: meta.seq, count: meta.count, etag: stored.etag })
    if (stored.body.length <= BODY_CACHE_MAX_CHARS) this.#bodies.set(key, stored)
  }

  /** True when the body of `slot` is cached as listed. */
  hasBody(slot: ListedSlot): boolean {
    return this.#bodies.get(slot.key)?.etag === slot.etag
  }

  /**
   * The batch in `slot`, from `ahead` (a body fetched earlier), the cache, or a GET;
   * `undefined` when it is a tombstone now (or gone). Parsed on each
   * call: callers may change the records they get.
   */
  async fetch(slot: ListedSlot, ahead?: Promise<StoredText | undefined>): Promise<FetchedBatch | undefined> {
    const early = (await ahead) ?? this.#bodies.get(slot.key)
    const fresh = early?.etag !== slot.etag
    const stored = fresh ? await this.io.get(slot.key) : early
    if (!stored) return undefined
    const batch = parseBatch(stored.body, slot.key)
    if (!batch) return undefined
    this.noteBatch(slot.key, stored, batch)
    return { batch, fresh }
  }

  /** The first seq and record count of `slot`, from the cache or a GET. */
  async metaOf(slot: ListedSlot): Promise<BatchMeta | undefined> {
    const known = this.#metas.get(slot.key)
    if (known && known.etag === slot.etag) return known
    return (await this.fetch(slot))?.batch
  }

  /** A read returned the batch in `slot` through `end`: the next page lists from there. */
  noteConsumed(logId: string, gen: number, slot: ListedSlot, end: number): void {
    this.hints.set(logId, { gen, batch: slot.batch, etag: slot.etag, end })
  }

  forget(logId: string): void {
    this.tails.delete(logId)
    this.hints.delete(logId)
  }
}
