import { HarnessError, type HarnessErrorCode, isHarnessError } from '../contract/errors.js'

/**
 * A refusal of the store by its code. A store reached through a proxy (another process,
 * a worker) may hand the code back on a plain error; a lock must still wait, a writer
 * must still retry.
 */
export const refused = (error: unknown, code: HarnessErrorCode): boolean =>
  isHarnessError(error, code) || (error instanceof Error && (error as { code?: unknown }).code === code)

/** A join that saw no chunk of its run in time: the run is gone or never started. */
export function noFirstChunk(runId: string, firstChunkDeadlineMs: number): HarnessError {
  return new HarnessError(
    'STREAM_NOT_FOUND',
    `Run ${JSON.stringify(runId)} stored no chunk within ${firstChunkDeadlineMs} ms of the join: it is gone or never started. Raise firstChunkDeadlineMs if producers may start later than that.`,
  )
}

/** A write to a stream that was closed. */
export function closedError(runId: string, what: string): HarnessError {
  return new HarnessError(
    'STREAM_CLOSED',
    `The stream of run ${JSON.stringify(runId)} is closed; ${what} after close writes nothing. Start a new run for new output.`,
  )
}
