import type { Clock, HarnessStore } from '../contract/types.js'
import { encodeOffset } from '../streams/offsets.js'
import { RunStream } from '../streams/run-stream.js'
import { acceptedChunk, inputRunId } from './inbox-log.js'
import type { InputRecord } from './records.js'

/**
 * The durable stream of a submitted prompt's turn, on the session's store, with its first
 * chunk in place: the submit and every driver write the same `run.accepted` chunk at
 * offset 1, so it is there once whoever comes first, and a reader can attach as soon as
 * the submit returns. The chunks of the session are redacted already (its stream redactor).
 */
export async function inputStream(store: HarnessStore, clock: Clock, sessionId: string, input: InputRecord): Promise<RunStream> {
  const runId = inputRunId(sessionId, input.inputId)
  const stream = runStream(store, clock, runId, null)
  await stream.upsert([{ chunk: acceptedChunk(input), offset: encodeOffset(runId, 1) }])
  return stream
}

/** A durability adapter of a submitted prompt's stream, to read it from `offset` (`'-1'`: from its start). */
export function runStream(store: HarnessStore, clock: Clock, runId: string, offset: string | null): RunStream {
  return new RunStream(
    { store, clock, redactor: undefined, retainMs: 300_000, firstChunkDeadlineMs: 1000, pollMinMs: 5, pollMaxMs: 100 },
    runId,
    offset,
  )
}
