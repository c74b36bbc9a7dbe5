import type { StreamChunk } from '@tanstack/ai'
import type { Clock, HarnessStore } from '../contract/types.js'
import type { HarnessStreamDurability } from '../streams/run-stream.js'
import { inputAt, nextInput } from './inbox-log.js'
import { inputStream } from './input-stream.js'
import type { LiveSession } from './live-session.js'
import type { TurnInputRef } from './session-fold.js'

export interface DriveDeps {
  readonly store: HarnessStore
  readonly clock: Clock
  /** Each chunk of the turns driven, after it is in the turn's durable stream. */
  readonly onChunk?: (chunk: StreamChunk) => void
}

/**
 * Drives a session whose lease this host holds until nothing is left for it to do: its
 * open turn first (cut by a crash, handed off, or due after a wait), then the prompts of
 * its inbox, one turn each, in order. Every turn of a submitted prompt writes its chunks to
 * that prompt's durable stream, whoever reads them: a turn a worker resumes after a crash
 * goes on in the same stream, after what the dead host stored. Stops at a turn that
 * waits (it keeps its queue), or when the run was stopped (a hand-off, a lost lease).
 * Returns how many runs it drove.
 */
export async function driveInbox(session: LiveSession, deps: DriveDeps): Promise<number> {
  let runs = 0
  if (session.needsRecovery) {
    const ref = session.inbox.openInput
    const stream = ref ? await openStream(deps, session.id, ref) : undefined
    await pipe(session.resume(), stream, session, deps)
    runs++
  }
  while (!session.inbox.open && session.status === 'idle') {
    const next = await nextInput(deps.store, session.id, session.inbox.taken)
    if (!next) break
    const stream = await inputStream(deps.store, deps.clock, session.id, next.record)
    await pipe(session.sendInput(next.record, next.seq), stream, session, deps)
    runs++
  }
  return runs
}

/** The stream of the open turn's prompt (the dead host's stream, when a worker resumes its turn). */
async function openStream(deps: DriveDeps, sessionId: string, ref: TurnInputRef): Promise<HarnessStreamDurability | undefined> {
  const input = await inputAt(deps.store, sessionId, ref.inboxSeq)
  return input ? inputStream(deps.store, deps.clock, sessionId, input.record) : undefined
}

/** Runs a turn to its end (or its next wait), each chunk stored before it is handed on; closes the stream when the turn ended. */
async function pipe(
  chunks: AsyncIterable<StreamChunk>,
  stream: HarnessStreamDurability | undefined,
  session: LiveSession,
  deps: DriveDeps,
): Promise<void> {
  for await (const chunk of chunks) {
    if (stream) await stream.append([chunk])
    deps.onChunk?.(chunk)
  }
  // A turn that waits, or was stopped for another host, goes on in this stream later.
  if (stream && !session.inbox.open) await stream.close()
}
