import type { ApprovalState } from './approval-records.js'
import { type QuestionState, questionId } from './ask-records.js'
import { type CallState, type CallView, Journals, type TurnCall } from './call-state.js'
import { JournalMap, JournalSet } from './call-views.js'
import { emptyOutcomeState, type OutcomeState } from './outcome-records.js'
import type { AssistantRecord, ParkedRecord, SessionOpenedRecord, ToolResultRecord } from './records.js'
import type { StepFailures, StoredStep } from './step-records.js'

/** A turn's trace context, as `harness.turn.started` logged it (see `TurnStartedRecord`). */
export interface LoggedTrace {
  readonly traceId: string
  readonly spanId: string
  readonly flags: number
}

/** The message shape `chat()` takes, rebuilt from the log. */
export interface FoldedMessage {
  role: 'user' | 'assistant' | 'tool'
  content: unknown
  toolCalls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>
  toolCallId?: string
}

/** Which submitted prompt a turn runs: its id and its seq in the session's inbox. */
export interface TurnInputRef {
  inputId: string
  inboxSeq: number
}

/** The turn that started and neither finished nor was cancelled: a cut turn, or one in flight. */
export interface OpenTurn {
  turnId: string
  lastAssistant: AssistantRecord | undefined
  callIds: string[]
  /** The turn span's context, when its start was traced. */
  trace: LoggedTrace | undefined
  /** The host that drives the turn now (its last turn.started or turn.resumed). */
  host: string | undefined
  /** Calls of the turn that had no result when it was last resumed: a crash cut them, or they wait. */
  unsettledAtResume: Set<string>
  /** The submitted prompt the turn runs (`host.submit`), absent for a prompt given to `session.send`. */
  input: TurnInputRef | undefined
}

/**
 * Everything the harness needs to know about a session, rebuilt from its log alone, as
 * everything outside the fold reads it. Per tool call there is one journal (`calls`);
 * the maps below it are views of the journals under the names they had before.
 */
export interface SessionState {
  readonly harness: string | undefined
  /** The session's first record: a log whose first record differs was deleted and started anew. */
  readonly opened: SessionOpenedRecord | undefined
  /** The seq the next append must expect. */
  readonly nextSeq: number
  readonly messages: readonly FoldedMessage[]
  /** One journal per tool call, by its id: its call, steps, sleeps, questions, approval, wait and result. */
  readonly calls: ReadonlyMap<string, CallView>
  readonly openTurn: Readonly<OpenTurn> | undefined
  /** The seq, in the session's inbox, of the last submitted prompt a turn took: later ones are queued. */
  readonly inboxSeq: number
  readonly turns: number
  /** How the last ended turn ended, if one did. */
  readonly lastTurnEnd: 'finished' | 'cancelled' | undefined
  /** For an agent tool's session: the call that runs it. */
  readonly parent: { sessionId: string; toolCallId: string } | null
  /** Names of the secrets tools of this session read (`harness.secret.used`); never their values. */
  readonly secretNames: ReadonlySet<string>
  /** Seam (outcome-records.ts): intents of steps with `verify` or `once`, and rollbacks of calls, by tool call id. */
  readonly outcomes: OutcomeState
  /** Stored steps by tool call id, then by step name (a view of `calls`). */
  readonly steps: ReadonlyMap<string, ReadonlyMap<string, StoredStep>>
  /** Failed attempts of steps without a value, by tool call id, then by step name (a view of `calls`). */
  readonly stepFailures: ReadonlyMap<string, ReadonlyMap<string, StepFailures>>
  /** The highest attempt begun of steps with retries and no value, by tool call id, then step name (a view of `calls`). */
  readonly stepStarts: ReadonlyMap<string, ReadonlyMap<string, number>>
  /** Logged results by tool call id (a view of `calls`). */
  readonly results: ReadonlyMap<string, ToolResultRecord>
  /** Every tool call the model made, by id (a view of `calls`). */
  readonly toolCalls: ReadonlyMap<string, TurnCall>
  /** Wake times of durable sleeps, by tool call id, then step name (a view of `calls`). */
  readonly sleeps: ReadonlyMap<string, ReadonlyMap<string, number>>
  /** Questions by id (`${toolCallId}:${name}`), with their answer once given (a view of `calls`). */
  readonly questions: ReadonlyMap<string, QuestionState>
  /** Approvals by tool call id, with their decision once given (a view of `calls`). */
  readonly approvals: ReadonlyMap<string, ApprovalState>
  /** Calls of the open turn that wait on purpose, by tool call id (a view of `calls`). */
  readonly parked: ReadonlyMap<string, ParkedRecord>
  /** Calls that had not started when their batch parked (a view of `calls`). */
  readonly notStarted: ReadonlySet<string>
  /** Calls of ended turns that never got a result, closed with a synthetic tool message (a view of `calls`). */
  readonly closedCalls: ReadonlySet<string>
}

/** Set by `SessionFold`'s static block: the one way to its private journals. */
let reachJournals: (state: SessionFold) => Journals

/** The journals of a fold, for the fold alone (session-fold.ts): nothing else writes them. */
export const journalsOf = (state: SessionFold): Journals => reachJournals(state)

/**
 * The state the fold writes (`applyEntry`); hand it on as `SessionState`. The views are
 * own fields, as the maps they replace were, and `calls` is not: a walk of the state sees
 * the fields it saw before the journals.
 */
export class SessionFold implements SessionState {
  harness: string | undefined = undefined
  opened: SessionOpenedRecord | undefined = undefined
  nextSeq = 1
  messages: FoldedMessage[] = []
  openTurn: OpenTurn | undefined = undefined
  inboxSeq = 0
  turns = 0
  lastTurnEnd: 'finished' | 'cancelled' | undefined = undefined
  parent: { sessionId: string; toolCallId: string } | null = null
  readonly secretNames = new Set<string>()
  readonly outcomes: OutcomeState = emptyOutcomeState()
  readonly #journals = new Journals()

  readonly steps = this.#perCall((c) => c.steps)
  readonly stepFailures = this.#perCall((c) => c.failures)
  readonly stepStarts = this.#perCall((c) => c.starts)
  readonly results = this.#perCall((c) => c.result)
  readonly toolCalls = this.#perCall((c) => c.call)
  readonly sleeps = this.#perCall((c) => c.sleeps)
  readonly questions = this.#questionsView()
  readonly approvals = this.#perCall((c) => c.approval)
  readonly parked = this.#perCall(
    (c) => c.parked,
    () => this.#journals.waiting(),
  )
  readonly notStarted = this.#idsWhere(
    (c) => c.notStarted,
    () => this.#journals.waiting(),
  )
  readonly closedCalls = this.#idsWhere((c) => c.closed)

  static {
    reachJournals = (state) => state.#journals
  }

  get calls(): ReadonlyMap<string, CallView> {
    return this.#journals.calls
  }

  /** A view of one part of each journal; `among` narrows the walk to the journals that can have it. */
  #perCall<V>(
    pick: (call: CallState) => V | undefined,
    among: () => Iterable<CallState> = () => this.#journals.calls.values(),
  ): JournalMap<V> {
    const calls = this.#journals.calls
    return new JournalMap(
      function* () {
        for (const call of among()) {
          const value = pick(call)
          if (value !== undefined) yield [call.id, value]
        }
      },
      (id) => {
        const call = calls.get(id)
        return call ? pick(call) : undefined
      },
    )
  }

  #idsWhere(holds: (call: CallState) => boolean, among: () => Iterable<CallState> = () => this.#journals.calls.values()): JournalSet {
    const calls = this.#journals.calls
    return new JournalSet(
      function* () {
        for (const call of among()) if (holds(call)) yield call.id
      },
      (id) => {
        const call = calls.get(id)
        return call !== undefined && holds(call)
      },
    )
  }

  #questionsView(): JournalMap<QuestionState> {
    const calls = this.#journals.calls
    return new JournalMap(
      function* () {
        for (const [id, call] of calls) for (const [name, q] of call.questions ?? []) yield [questionId(id, name), q]
      },
      (qid) => {
        // `${toolCallId}:${name}`: either part may hold a colon, so try each split.
        for (let at = qid.indexOf(':'); at >= 0; at = qid.indexOf(':', at + 1)) {
          const question = calls.get(qid.slice(0, at))?.questions?.get(qid.slice(at + 1))
          if (question) return question
        }
        return undefined
      },
    )
  }
}

/** A state with nothing folded yet. */
export function emptyState(): SessionFold {
  return new SessionFold()
}
