/**
 * `@tanstack/ai-harness/streams` — TanStack AI's resumable streams and locks on any
 * harness store: a run's stream is a log of the store (an appended batch of chunks in as few
 * records as the store allows; a chunk's offset is its record's seq and its place in it), a
 * lock is a lease of the store (its fence grows with each holder).
 *
 * ```ts
 * import { harnessStreams, harnessLocks } from '@tanstack/ai-harness/streams'
 * const streams = harnessStreams({ store })
 * return toServerSentEventsResponse(stream, { durability: { adapter: streams.durability(request) } })
 * ```
 * @packageDocumentation
 */
import { SecretScanner } from '../secrets/secret-scanner.js'
import { StreamRedactor } from '../secrets/stream-redactor.js'
import type { HarnessStreamsOptions, StreamInit } from './options.js'
import { streamLogId } from './options.js'
import { attachTo } from './request.js'
import { type HarnessStreamDurability, RunStream, type StreamSettings } from './run-stream.js'
import { checkRunId } from './offsets.js'

export type { HarnessStreamsOptions, StreamInit } from './options.js'
export type { HarnessStreamDurability } from './run-stream.js'
export { harnessLocks, type HarnessLocks, type HarnessLocksOptions, type HeldLock } from './locks.js'

/** The streams of one store: an adapter per run, and the removal of a run's stream. */
export interface HarnessStreams {
  /**
   * The durability adapter of a run, for `toServerSentEventsResponse`, `toHttpResponse`,
   * `resumeServerSentEventsResponse`, `resumeHttpResponse` and `replayRunStream`. From a
   * `Request`: the run its resume offset names, else `X-Run-Id`, then `?runId`, else a new
   * run; the offset from `Last-Event-ID`, then `?offset`. Or from `{ runId, offset }`.
   */
  durability(source: Request | StreamInit): HarnessStreamDurability
  /** Deletes the run's stream now (idempotent); a later resume of it fails with `STREAM_NOT_FOUND`. */
  remove(runId: string): Promise<void>
}

/**
 * Resumable streams on `options.store`, as it is: no table, index or setting of its own.
 * Readers in the process of the writer are woken at once; others poll the store, backing
 * off while nothing comes (`pollMs`). A closed stream is kept `retainMs` (5 minutes by
 * default), then deleted by the first read or snapshot that finds it expired, or at once
 * by `remove`.
 */
export function harnessStreams(options: HarnessStreamsOptions): HarnessStreams {
  const { store } = options
  const secrets = options.secrets
  const scanner = secrets === undefined ? undefined : secrets instanceof SecretScanner ? secrets : new SecretScanner(secrets)
  const settings: StreamSettings = {
    store,
    clock: options.clock ?? { now: () => Date.now() },
    redactor: scanner ? new StreamRedactor(scanner) : undefined,
    retainMs: options.retainMs ?? 300_000,
    firstChunkDeadlineMs: options.firstChunkDeadlineMs ?? 1000,
    pollMinMs: options.pollMs?.min ?? 5,
    pollMaxMs: options.pollMs?.max ?? 100,
  }
  return {
    durability(source) {
      const { runId, offset } = attachTo(source)
      return new RunStream(settings, runId, offset)
    },
    remove: async (runId) => store.delete(streamLogId(checkRunId(runId))),
  }
}
