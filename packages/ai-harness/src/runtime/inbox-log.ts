import type { StreamChunk } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import { HARNESS_LOG_PREFIX } from '../contract/harness-logs.js'
import type { HarnessStore, LogEntry } from '../contract/types.js'
import type { InputRecord } from './records.js'

/**
 * Where submitted prompts wait: the session's inbox, a log of its own, so a submit from
 * any host never races the driving host for the session log's next seq.
 */
export const inboxLogId = (sessionId: string): string => `${HARNESS_LOG_PREFIX}inbox/${sessionId}`

/** The run id of the durable stream of a submitted prompt's turn: its session and its input. */
export const inputRunId = (sessionId: string, inputId: string): string => `${sessionId}/input/${inputId}`

/** The session a run id of {@link inputRunId} names, or undefined for another run id. */
export function sessionOfRunId(runId: string): string | undefined {
  const at = runId.lastIndexOf('/input/')
  return at > 0 && INPUT_ID.test(runId.slice(at + '/input/'.length)) ? runId.slice(0, at) : undefined
}

/** A client's input id: short, and safe in a run id, a header and a URL. */
const INPUT_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function assertInputId(inputId: unknown): asserts inputId is string {
  if (typeof inputId !== 'string' || !INPUT_ID.test(inputId)) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `An inputId is 1 to 128 letters, digits, '.', '_', ':' or '-', chosen by the client (a UUID is fine), not ${JSON.stringify(inputId)}.`,
    )
  }
}

/** A submitted prompt and its seq in the inbox. */
export interface InboxEntry {
  readonly seq: number
  readonly record: InputRecord
}

const asInbox = (entries: readonly LogEntry[]): InboxEntry[] =>
  entries.filter((e) => e.record.type === 'harness.input').map((e) => ({ seq: e.seq, record: e.record as InputRecord }))

/** The whole inbox, in order. */
export async function readInbox(store: HarnessStore, sessionId: string): Promise<{ entries: InboxEntry[]; nextSeq: number }> {
  const entries: LogEntry[] = []
  for (;;) {
    const page = await store.read(inboxLogId(sessionId), { after: entries.at(-1)?.seq ?? 0, limit: 500 })
    if (page.length === 0) break
    entries.push(...page)
  }
  return { entries: asInbox(entries), nextSeq: (entries.at(-1)?.seq ?? 0) + 1 }
}

/** The first prompt after inbox seq `taken`: the next one a turn takes. */
export async function nextInput(store: HarnessStore, sessionId: string, taken: number): Promise<InboxEntry | undefined> {
  return asInbox(await store.read(inboxLogId(sessionId), { after: taken, limit: 1 }))[0]
}

/** The prompt at inbox seq `seq`. */
export async function inputAt(store: HarnessStore, sessionId: string, seq: number): Promise<InboxEntry | undefined> {
  return asInbox(await store.read(inboxLogId(sessionId), { after: seq - 1, limit: 1 })).find((e) => e.seq === seq)
}

/**
 * The first chunk of a submitted prompt's stream (TanStack AI's `run.accepted` marker), made
 * from the input alone: the submit and the driver both write it at offset 1, and the second
 * write finds the same chunk there, so it is written once whoever comes first.
 */
export function acceptedChunk(record: InputRecord): StreamChunk {
  return { type: 'CUSTOM', name: 'run.accepted', value: { inputId: record.inputId }, timestamp: record.at } as StreamChunk
}
