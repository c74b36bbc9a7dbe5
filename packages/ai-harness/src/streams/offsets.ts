import { HarnessError } from '../contract/errors.js'

/**
 * Offsets of a harness stream: `h1:<position>:<run id, URI-encoded>`. The position is the
 * log seq the store gave the chunk's record (`<seq>`), or, for a chunk of a record that
 * holds an appended batch, that seq and the chunk's index in it (`<seq>.<index>`). The run
 * id rides along so a resume that carries only `Last-Event-ID` finds its run, as TanStack's
 * `memoryStream` does. Opaque to callers.
 */
const PREFIX = 'h1:'

/** A join from the first chunk, and a join from the tail at the moment of the call. */
export const FROM_START = '-1'
export const FROM_NOW = 'now'

/** Where a chunk is in its stream's log: its record's seq, and its index when the record holds a batch. */
export interface Position {
  readonly seq: number
  readonly index: number | undefined
}

/** The position's text in an offset: `<seq>` or `<seq>.<index>`; equal texts are the same position. */
export const positionKey = (seq: number, index?: number): string => (index === undefined ? `${seq}` : `${seq}.${index}`)

export function encodeOffset(runId: string, seq: number, index?: number): string {
  return `${PREFIX}${positionKey(seq, index)}:${encodeURIComponent(runId)}`
}

/** `a` comes after `b` in the stream (a record's batch in index order, a lone chunk as index 0). */
export const isAfter = (a: Position, b: Position): boolean => a.seq > b.seq || (a.seq === b.seq && (a.index ?? 0) > (b.index ?? 0))

/** The run and position of an offset this module minted, or null for anything else. */
export function decodeOffset(offset: unknown): ({ runId: string } & Position) | null {
  if (typeof offset !== 'string' || !offset.startsWith(PREFIX)) return null
  const rest = offset.slice(PREFIX.length)
  const colon = rest.indexOf(':')
  if (colon <= 0) return null
  const match = /^([1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?$/.exec(rest.slice(0, colon))
  if (!match) return null
  const seq = Number(match[1])
  const index = match[2] === undefined ? undefined : Number(match[2])
  if (!Number.isSafeInteger(seq) || (index !== undefined && !Number.isSafeInteger(index))) return null
  try {
    const runId = decodeURIComponent(rest.slice(colon + 1))
    return runId === '' || encodeURIComponent(runId) !== rest.slice(colon + 1) ? null : { runId, seq, index }
  } catch {
    return null
  }
}

/** The position of `offset` in the run `runId`, or an `INVALID_ARGUMENT` that says why not. */
export function positionOf(offset: unknown, runId: string, what: string): Position {
  const decoded = decodeOffset(offset)
  if (!decoded) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `${what} ${JSON.stringify(offset)} is not an offset of a harness stream. Pass back exactly an offset that append, read or snapshot returned.`,
    )
  }
  if (decoded.runId !== runId) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `${what} ${JSON.stringify(offset)} belongs to run ${JSON.stringify(decoded.runId)}, not ${JSON.stringify(runId)}. Open the durability of that run to use it.`,
    )
  }
  return { seq: decoded.seq, index: decoded.index }
}

/** TanStack's rule for a run id: not empty, no CR or LF (it goes into headers). */
export function checkRunId(runId: unknown): string {
  if (typeof runId !== 'string' || runId.length === 0 || /[\r\n]/.test(runId)) {
    throw new HarnessError('INVALID_ARGUMENT', `A run id is a non-empty string without CR or LF, not ${JSON.stringify(runId)}.`)
  }
  return runId
}
