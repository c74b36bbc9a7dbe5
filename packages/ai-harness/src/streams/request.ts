import { resolveResumeRunId } from '@tanstack/ai'
import { checkRunId, decodeOffset, FROM_NOW, FROM_START } from './offsets.js'
import type { StreamInit } from './options.js'

/** The resume offset a request carries: `Last-Event-ID`, then `?offset`, as TanStack's helpers read it. */
function resumeOffsetOf(request: Request): string | null {
  const header = request.headers.get('Last-Event-ID')
  if (header) return header
  try {
    return new URL(request.url).searchParams.get('offset')
  } catch {
    return null
  }
}

/**
 * The run and the resume offset of a `Request` or an explicit init. A request's run is the
 * one its offset names, else `X-Run-Id`, then `?runId` (TanStack's `resolveResumeRunId`),
 * else a new one: a producer that names no run starts one.
 */
export function attachTo(source: Request | StreamInit): { runId: string; offset: string | null } {
  if (!(source instanceof Request)) return { runId: checkRunId(source.runId), offset: source.offset ?? null }
  const offset = resumeOffsetOf(source)
  const fromOffset = offset === null || offset === FROM_START || offset === FROM_NOW ? null : decodeOffset(offset)
  const runId = fromOffset?.runId ?? resolveResumeRunId(source) ?? crypto.randomUUID()
  return { runId: checkRunId(runId), offset }
}
