import type { StreamChunk } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import type { LogRecord } from '../contract/types.js'
import { jsonCopy, jsonEqual } from '../json/check-json.js'
import type { JsonObject } from '../json/json-types.js'
import type { StreamRedactor } from '../secrets/stream-redactor.js'
import { type Position, positionKey, positionOf } from './offsets.js'
import { chunkRecord, replaceRecord, type StreamState } from './stream-log.js'

/** An upsert's entry once checked: its position, its offset, and the chunk as it is stored. */
export type Planned = Position & { offset: string; chunk: JsonObject }

/** The chunk as it is stored: the session's secrets cut, then as JSON (no `undefined`, no class). */
export function storedChunk(redactor: StreamRedactor | undefined, chunk: StreamChunk, what: string): JsonObject {
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
    throw new HarnessError('INVALID_ARGUMENT', `${what} is not a chunk: pass the StreamChunk objects of the run.`)
  }
  const redacted = redactor ? redactor.redactEvent(chunk) : chunk
  return jsonCopy(redacted) as unknown as JsonObject
}

/** Every check of an upsert that needs no store: a dense array of entries, offsets of this run, none twice. */
export function checkEntries(
  entries: Array<{ chunk: StreamChunk; offset: string }>,
  runId: string,
  redactor: StreamRedactor | undefined,
): Planned[] {
  if (!Array.isArray(entries)) throw new HarnessError('INVALID_ARGUMENT', 'upsert takes an array of { chunk, offset } entries.')
  const seen = new Set<string>()
  return Array.from({ length: entries.length }, (_, i) => {
    const entry = i in entries ? entries[i] : undefined
    if (typeof entry !== 'object' || entry === null) {
      throw new HarnessError(
        'INVALID_ARGUMENT',
        `entries[${i}] is missing: upsert takes a dense array, one { chunk, offset } per position. Nothing was written.`,
      )
    }
    const position = positionOf(entry.offset, runId, `entries[${i}].offset`)
    const key = positionKey(position.seq, position.index)
    if (seen.has(key)) {
      throw new HarnessError(
        'INVALID_ARGUMENT',
        `entries[${i}].offset ${JSON.stringify(entry.offset)} appears twice in the batch; give each offset once. Nothing was written.`,
      )
    }
    seen.add(key)
    return { ...position, offset: entry.offset, chunk: storedChunk(redactor, entry.chunk, `entries[${i}].chunk`) }
  })
}

/**
 * The records an upsert appends: a replacement for each stored chunk it changes, the
 * chunk for each new offset. A new offset must be the very seq its record will get (a
 * lone chunk's offset, no index): anything else is a hole, or an offset this store never minted.
 */
export function planUpsert(planned: Planned[], state: StreamState, runId: string): LogRecord[] {
  const records: LogRecord[] = []
  let next = state.lastSeq + 1
  planned.forEach(({ seq, index, offset, chunk }, i) => {
    const at = state.index.get(positionKey(seq, index))
    if (at !== undefined) {
      if (jsonEqual(state.chunks[at]!.chunk, chunk)) return
      records.push(replaceRecord({ seq, index }, chunk))
      next++
      return
    }
    if (seq !== next || index !== undefined) {
      throw new HarnessError(
        'INVALID_ARGUMENT',
        `entries[${i}].offset ${JSON.stringify(offset)} is not a stored chunk of run ${JSON.stringify(runId)}, and not the next free position (${next}): it was not minted by this stream. Upsert only offsets append returned, or the position right after the tail. Nothing was written.`,
      )
    }
    records.push(chunkRecord(chunk))
    next++
  })
  return records
}
