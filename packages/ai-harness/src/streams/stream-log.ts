import type { StreamChunk } from '@tanstack/ai'
import type { LogEntry, LogRecord } from '../contract/types.js'
import type { JsonObject } from '../json/json-types.js'

/**
 * The records of a stream's log. A chunk is one record (its seq is its offset); an upsert
 * that changes a stored chunk appends a replacement naming the seq it replaces, since a
 * log never rewrites; `close` appends the end, with the time it was written.
 */
export const CHUNK_RECORD = 'harness.stream.chunk'
export const REPLACE_RECORD = 'harness.stream.replace'
export const CLOSED_RECORD = 'harness.stream.closed'

export const chunkRecord = (chunk: JsonObject): LogRecord => ({ type: CHUNK_RECORD, chunk })
export const replaceRecord = (at: number, chunk: JsonObject): LogRecord => ({ type: REPLACE_RECORD, at, chunk })
export const closedRecord = (at: number): LogRecord => ({ type: CLOSED_RECORD, at })

/** What a stream's log holds, folded: its chunks by seq (replacements applied), whether it ended. */
export interface StreamState {
  /** Chunks in seq order. */
  readonly chunks: Array<{ seq: number; chunk: StreamChunk }>
  /** Seq → index in `chunks`. */
  readonly index: Map<number, number>
  /** The last seq of the log (0 when empty). */
  lastSeq: number
  /** When the log was closed (by the writer's clock), or undefined while it is open. */
  closedAt: number | undefined
}

export function emptyState(): StreamState {
  return { chunks: [], index: new Map(), lastSeq: 0, closedAt: undefined }
}

/** Folds entries (in seq order, after `state.lastSeq`) into `state`. */
export function foldEntries(state: StreamState, entries: readonly LogEntry[]): StreamState {
  for (const { seq, record } of entries) {
    state.lastSeq = seq
    // Nothing counts after the end: a writer that raced the close lost.
    if (state.closedAt !== undefined) continue
    if (record.type === CHUNK_RECORD) {
      state.index.set(seq, state.chunks.length)
      state.chunks.push({ seq, chunk: record.chunk as unknown as StreamChunk })
    } else if (record.type === REPLACE_RECORD) {
      const at = state.index.get(record.at as number)
      if (at !== undefined) state.chunks[at] = { seq: record.at as number, chunk: record.chunk as unknown as StreamChunk }
    } else if (record.type === CLOSED_RECORD) {
      state.closedAt = record.at as number
    }
  }
  return state
}

/**
 * The chunks a page gives a tailing reader, in order: its chunk records, each as replaced
 * by a later replacement in the same page; whether the page holds the end.
 */
export function pageChunks(entries: readonly LogEntry[]): { chunks: Array<{ seq: number; chunk: StreamChunk }>; closed: boolean } {
  const state = foldEntries(emptyState(), entries)
  return { chunks: state.chunks, closed: state.closedAt !== undefined }
}
