import { HarnessError, type LogRecord } from '@tanstack/ai-harness/store'
import type { KeyLayout } from './keys.js'
import type { Listed, ObjectIO } from './objects.js'

/** What a batch object says about itself. Its records follow in the same body. */
export interface BatchMeta {
  readonly seq: number
  readonly count: number
}

export interface Batch extends BatchMeta {
  readonly records: LogRecord[]
}

/** A listed slot of a log: a batch, or a tombstone (an empty object) that `delete` left. */
export interface ListedSlot extends Listed {
  readonly gen: number
  readonly batch: number
}

/** The last batch of a log as this instance last saw it; batch 0 is an empty generation. */
export interface Tail {
  readonly gen: number
  readonly batch: number
  readonly nextSeq: number
  readonly etag: string | undefined
}

/** The live generation of a log, from a listing, and its batches (none if it is empty). */
export interface LiveView {
  readonly gen: number
  readonly batches: ListedSlot[]
}

/** One batch object's body: its first seq and its records, in the JSON text prepareBatch checked. */
export function batchBody(seq: number, json: readonly string[]): string {
  return `{"seq":${seq},"records":[${json.join(',')}]}`
}

/** A batch from its body; `undefined` for a tombstone (an empty body). */
export function parseBatch(body: string, key: string): Batch | undefined {
  if (body === '') return undefined
  let parsed: { seq?: unknown; records?: unknown } | undefined
  try {
    parsed = JSON.parse(body) as typeof parsed
  } catch {
    parsed = undefined
  }
  if (typeof parsed?.seq !== 'number' || !Array.isArray(parsed.records)) {
    throw new HarnessError(
      'SESSION_CORRUPT',
      `Object ${key} is not a log batch. Remove objects that other programs wrote under the store's prefix.`,
    )
  }
  return { seq: parsed.seq, count: parsed.records.length, records: parsed.records as LogRecord[] }
}

export const isTombstone = (slot: Listed) => slot.size === 0

/**
 * The live generation from a listing that is complete from some slot on: the generation
 * of the last key, unless that key is a tombstone (then that generation was deleted and
 * the next one, still empty, is live). `delete` only ever leaves tombstones as the last
 * slots of a generation (see `delete.ts`), so a generation with one is closed.
 */
export function liveOf(listed: readonly ListedSlot[], fallbackGen: number): LiveView {
  const last = listed.at(-1)
  if (!last) return { gen: fallbackGen, batches: [] }
  const batches = listed.filter((slot) => slot.gen === last.gen)
  if (batches.some(isTombstone)) return { gen: last.gen + 1, batches: [] }
  return { gen: last.gen, batches }
}

/** Slots in key order, with whether the listing reached the log's last key. */
export type SlotListing = ListedSlot[] & { complete?: boolean }

/** The log's slots after `startAfter` in key order; `complete` is false when it stopped at `max`. */
export async function listSlots(
  io: ObjectIO,
  keys: KeyLayout,
  logId: string,
  startAfter?: string,
  max = Number.POSITIVE_INFINITY,
): Promise<SlotListing> {
  const found: SlotListing = []
  found.complete = true
  for await (const page of io.list(keys.logPrefix(logId), startAfter)) {
    for (const item of page) {
      const slot = keys.slotOf(logId, item.key)
      if (slot !== undefined) found.push({ ...item, ...slot })
    }
    if (found.length >= max) {
      found.complete = false
      break
    }
  }
  return found
}
