import { boundedMap } from '@tanstack/ai-harness/store'
import type { Batch, ListedSlot } from './batches.js'
import type { StoredText } from './objects.js'

/** Logs whose read point (a parsed batch of at most maxBatchBytes, 1 MiB by default, and up to 2 MiB of bodies downloading ahead) a reader keeps. */
const READ_POINTS = 8

/** A batch a read fetched and parsed but did not return whole yet. */
export interface HeldBatch {
  readonly slot: ListedSlot
  readonly batch: Batch
}

/**
 * Where the last page of a log ended, and what that read had already learned past it: the
 * parsed batches it fetched but did not return whole, the listed slots after them, and
 * the bodies of the next few on their way. The next page starts from here: it goes on
 * with the listing instead of listing again, and downloads and parses no batch twice.
 */
export class ReadPoint {
  /** Parsed batches in seq order; the first holds `next` (or ends before it, right after a start). */
  readonly held: HeldBatch[] = []
  /** Bodies on their way for queued slots, by key; a failed one is fetched again when needed. */
  readonly ahead = new Map<string, Promise<StoredText | undefined>>()
  /** The seq after the last batch fetched: the first seq of the next one. Unknown until one is fetched. */
  end: number | undefined
  /** The last batch fetched. */
  lastSlot: ListedSlot | undefined
  /** The last listing reached the log's end (as it was then). */
  listedToEnd = false
  /** Listed slots after the held batches, not fetched yet, in key order: `#listed` from `#at` on. */
  #listed: ListedSlot[]
  #at = 0
  /** The last key listed: the listing goes on after it. */
  #listedTo: string

  constructor(
    /** The generation the listing showed live. */
    readonly gen: number,
    /** The seq of the next entry to return. */
    public next: number,
    listed: ListedSlot[],
    listedTo: string,
  ) {
    this.#listed = listed
    this.#listedTo = listedTo
  }

  get listedTo(): string {
    return this.#listedTo
  }

  /** Listed slots not fetched yet. */
  get queued(): number {
    return this.#listed.length - this.#at
  }

  /** The first `count` slots not fetched yet, left in the queue. */
  nextQueued(count: number): ListedSlot[] {
    return this.#listed.slice(this.#at, this.#at + count)
  }

  /** Takes the first `count` slots not fetched yet out of the queue. */
  dequeue(count: number): ListedSlot[] {
    const taken = this.nextQueued(count)
    // An index, not shift or splice: a long listing of small batches is taken a window at a time.
    this.#at += taken.length
    // Nothing left: let go of the slots taken, which a read of a whole log may have many of.
    if (this.#at === this.#listed.length) {
      this.#listed = []
      this.#at = 0
    }
    return taken
  }

  /** Adds what a listing after `listedTo` found. */
  enqueue(listed: readonly ListedSlot[]): void {
    if (listed.length === 0) return
    this.#listed = this.#listed.slice(this.#at).concat(listed)
    this.#at = 0
    this.#listedTo = listed.at(-1)!.key
  }
}

/**
 * The read points of the most recently read logs. A read takes its log's point out while
 * it works on it, so two reads of one log at once never share one: the second starts
 * from a listing, as a read on another instance would.
 */
export class ReadPoints {
  readonly #points = boundedMap<string, ReadPoint>(READ_POINTS)

  /** The point of `logId` if its next page starts at `next`, taken out of the cache. */
  take(logId: string, next: number): ReadPoint | undefined {
    const point = this.#points.get(logId)
    if (point?.next !== next) return undefined
    this.#points.delete(logId)
    return point
  }

  put(logId: string, point: ReadPoint): void {
    this.#points.set(logId, point)
  }

  forget(logId: string): void {
    this.#points.delete(logId)
  }
}
