import type { StreamChunk } from '@tanstack/ai'
import type { LogEntry, LogRecord } from '../contract/types.js'
import type { JsonObject } from '../json/json-types.js'
import { type Position, positionKey } from './offsets.js'

/**
 * The records of a stream's log. An append of one chunk is one chunk record (its seq is its
 * position); an append of several writes them as batch records, each holding as many chunks
 * as the store's record size allows (a chunk's position is the record's seq and its index),
 * so a batch costs about what one write of its bytes costs. An upsert that changes a stored
 * chunk appends a replacement naming the position it replaces, since a log never rewrites;
 * `close` appends the end, with the time it was written.
 */
export const CHUNK_RECORD = 'harness.stream.chunk'
export const CHUNKS_RECORD = 'harness.stream.chunks'
export const REPLACE_RECORD = 'harness.stream.replace'
export const CLOSED_RECORD = 'harness.stream.closed'

export const chunkRecord = (chunk: JsonObject): LogRecord => ({ type: CHUNK_RECORD, chunk })
export const chunksRecord = (chunks: JsonObject[]): LogRecord => ({ type: CHUNKS_RECORD, chunks })
export const replaceRecord = ({ seq, index }: Position, chunk: JsonObject): LogRecord =>
  index === undefined ? { type: REPLACE_RECORD, at: seq, chunk } : { type: REPLACE_RECORD, at: seq, index, chunk }
export const closedRecord = (at: number): LogRecord => ({ type: CLOSED_RECORD, at })

/** A stored chunk and its position. */
export interface StoredChunk extends Position {
  readonly chunk: StreamChunk
}

/** What a stream's log holds, folded: its chunks in order (replacements applied), whether it ended. */
export interface StreamState {
  /** Chunks in stream order. */
  readonly chunks: StoredChunk[]
  /** Position key (`positionKey`) → index in `chunks`. */
  readonly index: Map<string, number>
  /** The last seq of the log (0 when empty). */
  lastSeq: number
  /** When the log was closed (by the writer's clock), or undefined while it is open. */
  closedAt: number | undefined
}

export function emptyState(): StreamState {
  return { chunks: [], index: new Map(), lastSeq: 0, closedAt: undefined }
}

function add(state: StreamState, chunk: StoredChunk): void {
  state.index.set(positionKey(chunk.seq, chunk.index), state.chunks.length)
  state.chunks.push(chunk)
}

/** Folds entries (in seq order, after `state.lastSeq`) into `state`. */
export function foldEntries(state: StreamState, entries: readonly LogEntry[]): StreamState {
  for (const { seq, record } of entries) {
    state.lastSeq = seq
    // Nothing counts after the end: a writer that raced the close lost.
    if (state.closedAt !== undefined) continue
    if (record.type === CHUNK_RECORD) {
      add(state, { seq, index: undefined, chunk: record.chunk as unknown as StreamChunk })
    } else if (record.type === CHUNKS_RECORD) {
      const chunks = record.chunks as unknown as StreamChunk[]
      for (let index = 0; index < chunks.length; index++) add(state, { seq, index, chunk: chunks[index]! })
    } else if (record.type === REPLACE_RECORD) {
      const position = { seq: record.at as number, index: record.index as number | undefined }
      const at = state.index.get(positionKey(position.seq, position.index))
      if (at !== undefined) state.chunks[at] = { ...position, chunk: record.chunk as unknown as StreamChunk }
    } else if (record.type === CLOSED_RECORD) {
      state.closedAt = record.at as number
    }
  }
  return state
}

/**
 * The chunks a page gives a tailing reader, in order: its chunks, each as replaced by a
 * later replacement in the same page; whether the page holds the end.
 */
export function pageChunks(entries: readonly LogEntry[]): { chunks: StoredChunk[]; closed: boolean } {
  const state = foldEntries(emptyState(), entries)
  return { chunks: state.chunks, closed: state.closedAt !== undefined }
}
