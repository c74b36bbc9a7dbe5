import type { LogEntry } from '../contract/types.js'
import type { Host } from '../runtime/host.js'
import { harnessNamed } from '../runtime/person-input.js'
import { openWaits } from '../runtime/open-waits.js'
import type { ParkedRecord } from '../runtime/records.js'
import { type OpenQuestion as FoldedOpenQuestion, parkedCall, readAndFold, type SessionState } from '../runtime/session-fold.js'
import { type LogStatus, statusOf } from '../runtime/session-status.js'
import { numberParam } from './request-input.js'
import { Refusal } from './responses.js'

/**
 * An open question of a session: the one type of `@tanstack/ai-harness/log`, which the
 * session view's `questions` hold.
 * @deprecated Import `OpenQuestion` from `@tanstack/ai-harness/log`.
 */
export type OpenQuestion = FoldedOpenQuestion

/** A tool call waiting for approval, as the session view shows it. */
export interface OpenApprovalView {
  toolCallId: string
  toolName: string
  /** The tool's description from its definition, when this host runs the session's harness; `null` otherwise. */
  description: string | null
  /** The call's arguments as the model gave them: what the approval lets run. */
  input: unknown
}

/** What `GET /sessions/:id?after=&limit=` returns. */
export interface SessionView {
  sessionId: string
  harness: string | null
  /** What the log says the session is doing: `idle`, `cut` or `parked` (see `SessionStatus`; the log cannot tell a running turn from a cut one). */
  status: LogStatus
  /** Why the open turn waits, when it is `parked`: for an answer (`ask`), an approval, a wake time (`sleep`, with `until`) or a child agent; `null` otherwise. */
  parked: { reason: ParkedRecord['reason']; until: number | null } | null
  turns: number
  /** The seq of the last record (seqs are dense from 1, so also how many records the log holds): pass it as `after` to the events stream. */
  lastSeq: number
  questions: FoldedOpenQuestion[]
  /** Tool calls of the open turn that wait for a person's approval (`POST …/approve`). */
  approvals: OpenApprovalView[]
  /** One page of the log: the records after `after`, at most `limit` of them. */
  entries: LogEntry[]
  /** The `after` of the next page, or `null` when this page reaches the end of the log. */
  next: number | null
}

/**
 * The questions of the open turn nobody has answered yet.
 * @deprecated Use `openWaits(sessionId, state).questions` from `@tanstack/ai-harness/log`: the same questions, of the same type.
 */
export function openQuestions(state: SessionState, sessionId = ''): FoldedOpenQuestion[] {
  return openWaits(sessionId, state).questions
}

/**
 * The session's state, folded page by page from the whole log, and one page of its
 * records: a log of any length is read in pages by the caller (`after`, `next`).
 */
export async function readSession(host: Host, sessionId: string, params: URLSearchParams): Promise<SessionView> {
  const after = numberParam(params, 'after', 0, Number.MAX_SAFE_INTEGER)
  const limit = numberParam(params, 'limit', 1000, 10_000) || 1000
  const state = await readAndFold(host.store, sessionId)
  if (state.nextSeq === 1) throw new Refusal('SESSION_NOT_FOUND', `There is no session ${JSON.stringify(sessionId)} (its log is empty).`)
  const entries = await host.store.read(sessionId, { after, limit })
  const lastSeq = Math.max(state.nextSeq - 1, entries.at(-1)?.seq ?? 0)
  const parked = parkedCall(state)
  const waits = openWaits(sessionId, state)
  const { questions } = waits
  const tools = (state.harness === undefined ? undefined : harnessNamed(host.harnesses, state.harness))?.tools ?? []
  const approvals = waits.approvals.map(({ toolCallId, toolName, input }) => {
    const description = tools.find((tool) => tool.name === toolName)?.description
    return { toolCallId, toolName, description: typeof description === 'string' ? description : null, input }
  })
  const status = statusOf(state)
  const end = entries.at(-1)?.seq ?? after
  return {
    sessionId,
    harness: state.harness ?? null,
    status,
    parked: status === 'parked' && parked ? { reason: parked.reason, until: parked.until } : null,
    turns: state.turns,
    lastSeq,
    questions,
    approvals,
    entries,
    next: entries.length > 0 && end < lastSeq ? end : null,
  }
}
