import { HarnessError, isHarnessError } from '../contract/errors.js'
import { assertSessionId } from '../contract/harness-logs.js'
import { assertLogId } from '../contract/prepare-batch.js'
import type { Clock } from '../contract/types.js'
import { jsonEqual } from '../json/check-json.js'
import type { Harness } from './harness.js'
import { assertInputId, inboxLogId, inputRunId, readInbox } from './inbox-log.js'
import { toMessages } from './send-turn.js'
import { type PersonInputRules, secretsOf } from './person-input.js'
import type { InputRecord } from './records.js'
import { parkedCall, readAndFold, type SessionState } from './session-fold.js'
import type { TurnInput } from './session.js'
import { inputStream } from './input-stream.js'
import { durableNow, type GuardedStore, isOutcomeUnknown } from './store-boundary.js'

/** Options of `host.submit`. */
export interface SubmitOptions {
  sessionId: string
  /** Chosen by the client, unique in the session: a second submit with the same id is the same prompt (one turn). */
  inputId: string
  prompt: TurnInput
  /** For a session that does not exist yet: its harness. Default: the host's only harness. */
  harness?: string
}

/** What a submit did. */
export interface SubmitResult {
  /** The run id of the turn's durable stream (`@tanstack/ai-harness/streams`): read it from `-1` to follow the turn. */
  readonly runId: string
  /** True when the inbox held this inputId already: nothing was written. */
  readonly duplicate: boolean
}

/** Most prompts a session holds queued behind its turn; a submit beyond is `SESSION_BUSY`. */
export const MAX_QUEUED = 32
const ATTEMPTS = 5

/**
 * Logs a prompt in the session's inbox from any host, without its lease, and makes the
 * session due at once. The session is created when it has no log. Each attempt reads the
 * session and the inbox and decides from them, so a retry after a lost reply finds its
 * own prompt (a duplicate) and a race of two submits of one inputId writes it once.
 */
export async function submitInput(
  store: GuardedStore,
  clock: Clock,
  rules: PersonInputRules,
  options: SubmitOptions,
): Promise<SubmitResult> {
  const { sessionId, inputId } = options ?? ({} as SubmitOptions)
  assertLogId(sessionId, store.limits)
  assertSessionId(sessionId)
  assertInputId(inputId)
  const messages = toMessages(options.prompt)
  const runId = inputRunId(sessionId, inputId)
  let failure: unknown
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const state = await readAndFold(store, sessionId)
    if (state.nextSeq === 1) {
      failure = await createSession(store, clock, rules.harnesses, sessionId, options.harness)
      continue
    }
    const inbox = await readInbox(store, sessionId)
    const same = inbox.entries.find((e) => e.record.inputId === inputId)
    if (same) {
      if (!jsonEqual(same.record.messages, messages))
        throw new HarnessError(
          'INVALID_ARGUMENT',
          `inputId ${JSON.stringify(inputId)} was submitted with another prompt; choose a new inputId for a new prompt.`,
        )
      if (same.seq > state.inboxSeq) await accept(store, clock, same.record, sessionId)
      return { runId, duplicate: true }
    }
    await assertTakes(rules, state, sessionId, messages, inbox.entries.filter((e) => e.seq > state.inboxSeq).length)
    const record: InputRecord = { type: 'harness.input', inputId, messages, at: clock.now() }
    // Due before the append too: a crash between the two never leaves a prompt with nothing to wake its session.
    await store.wakeups?.schedule(sessionId, await durableNow(store, clock))
    try {
      await store.append(inboxLogId(sessionId), inbox.nextSeq, [record])
    } catch (error) {
      // Another submit got the seq (maybe this very prompt), or nobody knows whether ours landed: read again.
      if (isHarnessError(error, 'LOG_CONFLICT') || isOutcomeUnknown(error)) {
        failure = error
        continue
      }
      throw error
    }
    await accept(store, clock, record, sessionId)
    return { runId, duplicate: false }
  }
  if (isOutcomeUnknown(failure)) throw failure
  throw new HarnessError(
    'SESSION_BUSY',
    `Session ${JSON.stringify(sessionId)} kept changing while submitting a prompt; submit it again with the same inputId.`,
  )
}

/** Refuses a prompt the session cannot take: a child agent's session, a turn waiting for a person, a full queue, a secret. */
async function assertTakes(
  rules: PersonInputRules,
  state: SessionState,
  sessionId: string,
  messages: InputRecord['messages'],
  queued: number,
): Promise<void> {
  if (!rules.harnesses.some((h) => h.name === state.harness))
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `Session ${JSON.stringify(sessionId)} belongs to harness ${JSON.stringify(state.harness)}, which this host does not run; submit from a host that does.`,
    )
  if (state.parent)
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `Session ${JSON.stringify(sessionId)} runs an agent tool's call; its prompts come from its parent session.`,
    )
  const waiting = state.openTurn ? parkedCall(state) : undefined
  if (waiting && (waiting.reason === 'ask' || waiting.reason === 'approval'))
    throw new HarnessError(
      'SESSION_BUSY',
      `The session's open turn waits for a person (${waiting.reason === 'ask' ? 'an answer' : 'an approval'}); answer it (host.answer / host.approve) or cancel the turn before submitting a new prompt.`,
    )
  if (queued >= MAX_QUEUED)
    throw new HarnessError(
      'SESSION_BUSY',
      `Session ${JSON.stringify(sessionId)} has ${queued} prompts queued already; wait for its turns to run before submitting more.`,
    )
  const held = (await secretsOf(rules, sessionId, state)).find(messages)
  if (held)
    throw new HarnessError('RECORD_SECRET', `The prompt holds a secret of the session at ${held.path}; submit it without the secret.`)
}

/** Writes the first record of a session without a log; a conflict means another submit created it. */
async function createSession(
  store: GuardedStore,
  clock: Clock,
  harnesses: readonly Harness[],
  sessionId: string,
  wanted?: string,
): Promise<unknown> {
  const harness = wanted === undefined && harnesses.length === 1 ? harnesses[0] : harnesses.find((h) => h.name === wanted)
  if (!harness)
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `Say which harness the new session ${JSON.stringify(sessionId)} runs: host.submit({ harness: 'name' }), one of those the host runs.`,
    )
  try {
    await store.append(sessionId, 1, [{ type: 'harness.session.opened', harness: harness.name, at: clock.now(), parent: null }])
    return undefined
  } catch (error) {
    if (isHarnessError(error, 'LOG_CONFLICT') || isOutcomeUnknown(error)) return error
    throw error
  }
}

/** The prompt is in: its stream exists from now on (a reader may attach at once), and the session is due. */
async function accept(store: GuardedStore, clock: Clock, record: InputRecord, sessionId: string): Promise<void> {
  await inputStream(store, clock, sessionId, record)
  await store.wakeups?.schedule(sessionId, await durableNow(store, clock))
}
