import { HarnessError } from '../contract/errors.js'

/**
 * Offsets of a harness stream: `h1:<seq>:<run id, URI-encoded>`. The seq is the log seq the
 * store gave the chunk's record; the run id rides along so a resume that carries only
 * `Last-Event-ID` finds its run, as TanStack's `memoryStream` does. Opaque to callers.
 */
const PREFIX = 'h1:'

/** A join from the first chunk, and a join from the tail at the moment of the call. */
export const FROM_START = '-1'
export const FROM_NOW = 'now'

export function encodeOffset(runId: string, seq: number): string {
  return `${PREFIX}${seq}:${encodeURIComponent(runId)}`
}

/** The run and seq of an offset this module minted, or null for anything else. */
export function decodeOffset(offset: unknown): { runId: string; seq: number } | null {
  if (typeof offset !== 'string' || !offset.startsWith(PREFIX)) return null
  const rest = offset.slice(PREFIX.length)
  const colon = rest.indexOf(':')
  if (colon <= 0) return null
  const digits = rest.slice(0, colon)
  if (!/^[1-9][0-9]*$/.test(digits)) return null
  const seq = Number(digits)
  if (!Number.isSafeInteger(seq)) return null
  try {
    const runId = decodeURIComponent(rest.slice(colon + 1))
    return runId === '' || encodeURIComponent(runId) !== rest.slice(colon + 1) ? null : { runId, seq }
  } catch {
    return null
  }
}

/** The seq of `offset` in the run `runId`, or an `INVALID_ARGUMENT` that says why not. */
export function seqOf(offset: unknown, runId: string, what: string): number {
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
  return decoded.seq
}

/** TanStack's rule for a run id: not empty, no CR or LF (it goes into headers). */
export function checkRunId(runId: unknown): string {
  if (typeof runId !== 'string' || runId.length === 0 || /[\r\n]/.test(runId)) {
    throw new HarnessError('INVALID_ARGUMENT', `A run id is a non-empty string without CR or LF, not ${JSON.stringify(runId)}.`)
  }
  return runId
}
