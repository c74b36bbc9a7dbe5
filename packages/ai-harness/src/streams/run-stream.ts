import type { StreamChunk, UpsertableStreamDurability } from '@tanstack/ai'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import { forEachPage, readAll } from '../contract/read-all.js'
import type { Clock, HarnessStore, LogRecord } from '../contract/types.js'
import { jsonEqual } from '../json/check-json.js'
import type { StreamRedactor } from '../secrets/stream-redactor.js'
import { batchesOf, chunkRecords } from './batches.js'
import { closedError, noFirstChunk, refused } from './refusals.js'
import { encodeOffset, FROM_NOW, FROM_START, isAfter, type Position, positionOf } from './offsets.js'
import { streamLogId } from './options.js'
import { CHUNKS_RECORD, closedRecord, emptyState, foldEntries, pageChunks, type StoredChunk, type StreamState } from './stream-log.js'
import { Backoff, waitForMore, wakeReaders } from './tail-wait.js'
import { checkEntries, planUpsert, storedChunk } from './upsert-plan.js'

/** What every stream of one `harnessStreams` shares. */
export interface StreamSettings {
  readonly store: HarnessStore
  readonly clock: Clock
  readonly redactor: StreamRedactor | undefined
  readonly retainMs: number
  readonly firstChunkDeadlineMs: number
  readonly pollMinMs: number
  readonly pollMaxMs: number
}

/** A TanStack AI durability adapter on a harness store, for one run. */
export interface HarnessStreamDurability extends UpsertableStreamDurability {
  /** The run this adapter attaches to (from the request, the init, or new). Send it as `X-Run-Id`. */
  readonly runId: string
}

type Entry = { offset: string; chunk: StreamChunk }

/** Attempts of a write that lost a race for the log's next seq before it gives up with `LOG_CONFLICT`. */
const WRITE_ATTEMPTS = 8
const PAGE = 500

/**
 * One run's stream as a log of the store: each chunk a record whose seq is its offset,
 * a replacement record for an upsert that changes a stored chunk, a closed record at the end.
 */
export class RunStream implements HarnessStreamDurability {
  readonly #logId: string
  /**
   * The next free seq as this instance last saw it, and whether it saw the end. A new
   * adapter guesses 1 (a producer's run is new): a wrong guess is a conflict, after which
   * it reads the log, so a fresh run's first append costs one write and no read.
   */
  #nextSeq: number | undefined = 1
  #closed = false
  /** Stamped on every record this instance writes (`w`, one value per append call), so a read-back knows its own writes from equal ones. */
  readonly #writer = crypto.randomUUID().slice(0, 18)
  #writes = 0

  constructor(
    private readonly settings: StreamSettings,
    readonly runId: string,
    private readonly offset: string | null,
  ) {
    this.#logId = streamLogId(runId)
  }

  resumeFrom = (): string | null => this.offset

  append = async (chunks: StreamChunk[]): Promise<string[]> => {
    if (!Array.isArray(chunks)) throw new HarnessError('INVALID_ARGUMENT', 'append takes an array of chunks.')
    if (chunks.length === 0) return []
    const stored = chunks.map((chunk, i) => storedChunk(this.settings.redactor, chunk, `chunks[${i}]`))
    const offsets: string[] = []
    for (const batch of batchesOf(chunkRecords(stored, this.settings.store.limits), this.settings.store.limits)) {
      const first = await this.#appendAtTail(batch)
      batch.forEach((record, r) => {
        if (record.type !== CHUNKS_RECORD) offsets.push(encodeOffset(this.runId, first + r))
        else for (let i = 0; i < (record.chunks as unknown[]).length; i++) offsets.push(encodeOffset(this.runId, first + r, i))
      })
    }
    return offsets
  }

  upsert = async (entries: Array<{ chunk: StreamChunk; offset: string }>): Promise<string[]> => {
    const planned = checkEntries(entries, this.runId, this.settings.redactor)
    for (let attempt = 1; ; attempt++) {
      const state = await this.#load()
      const records = planUpsert(planned, state, this.runId)
      if (records.length === 0) return planned.map((p) => p.offset)
      if (state.closedAt !== undefined) throw closedError(this.runId, 'upsert')
      try {
        await this.#appendBatches(state.lastSeq + 1, records)
        return planned.map((p) => p.offset)
      } catch (error) {
        if (!refused(error, 'LOG_CONFLICT') || attempt >= WRITE_ATTEMPTS) throw error
      }
    }
  }

  snapshot = async (): Promise<Entry[]> => {
    const state = await this.#load()
    return state.chunks.map((stored) => this.#entry(stored))
  }

  close = async (): Promise<void> => {
    if (this.#closed) return
    try {
      await this.#appendAtTail([closedRecord(this.settings.clock.now())])
    } catch (error) {
      if (!isHarnessError(error, 'STREAM_CLOSED')) throw error
    }
    this.#closed = true
  }

  read = (offset: string, signal?: AbortSignal): AsyncIterable<Entry> => this.#read(offset, signal)

  async *#read(offset: string, signal: AbortSignal | undefined): AsyncGenerator<Entry> {
    const fromStart = offset === FROM_START || offset === FROM_NOW
    const after = fromStart ? undefined : positionOf(offset, this.runId, 'The read offset')
    const state = await this.#load()
    if (state.lastSeq === 0 && !fromStart) {
      throw new HarnessError(
        'STREAM_NOT_FOUND',
        `No stream is stored for run ${JSON.stringify(this.runId)}: it never started, or it ended and was removed. Start the run again instead of resuming it.`,
      )
    }
    // A join from now skips every chunk of the records stored so far.
    const threshold: Position = after ?? { seq: offset === FROM_NOW ? state.lastSeq : 0, index: Number.POSITIVE_INFINITY }
    for (const stored of state.chunks) {
      if (signal?.aborted) return
      if (isAfter(stored, threshold)) yield this.#entry(stored)
    }
    if (state.closedAt !== undefined) return
    yield* this.#tail(state.lastSeq, signal)
  }

  /** Tails the log after `last` until its end, or until `signal` aborts. */
  async *#tail(last: number, signal: AbortSignal | undefined): AsyncGenerator<Entry> {
    const { store, pollMinMs, pollMaxMs, firstChunkDeadlineMs } = this.settings
    const backoff = new Backoff(pollMinMs, pollMaxMs)
    const deadline = last === 0 ? performance.now() + firstChunkDeadlineMs : undefined
    for (;;) {
      if (signal?.aborted) return
      const page = await store.read(this.#logId, { after: last, limit: PAGE })
      if (page.length === 0) {
        if (last === 0 && deadline !== undefined && performance.now() >= deadline)
          throw noFirstChunk(this.runId, this.settings.firstChunkDeadlineMs)
        await waitForMore(store, this.#logId, backoff.next(), signal)
        continue
      }
      backoff.reset()
      last = page.at(-1)!.seq
      const { chunks, closed } = pageChunks(page)
      for (const stored of chunks) {
        if (signal?.aborted) return
        yield this.#entry(stored)
      }
      if (closed) return
    }
  }

  #entry({ seq, index, chunk }: StoredChunk): Entry {
    return { offset: encodeOffset(this.runId, seq, index), chunk }
  }

  /** The whole log, folded; a closed stream past its retention is deleted and reads as empty. */
  async #load(): Promise<StreamState> {
    const { store, clock, retainMs } = this.settings
    const state = foldEntries(emptyState(), await readAll(store, this.#logId, PAGE))
    if (state.closedAt !== undefined && clock.now() >= state.closedAt + retainMs) {
      await store.delete(this.#logId)
      return emptyState()
    }
    return state
  }

  /** Appends `records` at the log's tail, refreshing the tail after a lost race; returns the first seq. */
  async #appendAtTail(records: LogRecord[]): Promise<number> {
    const { store } = this.settings
    for (let attempt = 1; ; attempt++) {
      const seq = this.#nextSeq ?? (await this.#refreshTail())
      if (this.#closed) throw closedError(this.runId, records[0]?.type === 'harness.stream.closed' ? 'close' : 'append')
      try {
        await this.#appendOnce(seq, records)
        this.#nextSeq = seq + records.length
        wakeReaders(store, this.#logId)
        return seq
      } catch (error) {
        if (!refused(error, 'LOG_CONFLICT') || attempt >= WRITE_ATTEMPTS) throw error
        this.#nextSeq = undefined
      }
    }
  }

  /**
   * One append at `seq`. A `LOG_CONFLICT` may be our own batch, sent twice by a retry inside
   * the store after its first reply was lost: read back, and when the log holds exactly
   * these records there, with this call's write stamp, it is ours and done (appending them
   * again would store every chunk twice).
   */
  async #appendOnce(seq: number, unstamped: LogRecord[]): Promise<void> {
    const { store } = this.settings
    // Equal content is not proof: another producer may have appended the same chunks (a takeover replaying them).
    const w = `${this.#writer}.${++this.#writes}`
    const records = unstamped.map((record) => ({ ...record, w }))
    try {
      await store.append(this.#logId, seq, records)
    } catch (error) {
      if (!refused(error, 'LOG_CONFLICT')) throw error
      const back = await store.read(this.#logId, { after: seq - 1, limit: records.length }).catch(() => [])
      const ours = back.length === records.length && back.every((entry, i) => entry.seq === seq + i && jsonEqual(entry.record, records[i]))
      if (!ours) throw error
    }
  }

  /** Reads the log from the start to find its next free seq and whether it ended. */
  async #refreshTail(): Promise<number> {
    const state = emptyState()
    await forEachPage(this.settings.store, this.#logId, PAGE, (page) => void foldEntries(state, page))
    this.#closed = state.closedAt !== undefined
    this.#nextSeq = state.lastSeq + 1
    return this.#nextSeq
  }

  async #appendBatches(first: number, records: LogRecord[]): Promise<void> {
    const { store } = this.settings
    let seq = first
    for (const batch of batchesOf(records, store.limits)) {
      await this.#appendOnce(seq, batch)
      seq += batch.length
    }
    this.#nextSeq = seq
    wakeReaders(store, this.#logId)
  }
}
