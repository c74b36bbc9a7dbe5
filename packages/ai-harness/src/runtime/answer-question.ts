import { z } from 'zod'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import { assertLogId } from '../contract/prepare-batch.js'
import type { Clock } from '../contract/types.js'
import { findNonJson, jsonCopy, jsonEqual } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { resolvableSecrets } from '../secrets/session-secrets.js'
import type { Harness } from './harness.js'
import type { AnswerRecord } from './records.js'
import { readAndFold } from './session-fold.js'
import { durableNow, type GuardedStore, isOutcomeUnknown } from './store-boundary.js'

const ATTEMPTS = 5

/**
 * Logs the answer to a question of a parked session and makes the session due at once.
 * Each attempt reads the log and decides from it, so a reply lost after the append
 * landed (or a retry of a call that failed that way) finds its own answer and succeeds,
 * and the wakeup is scheduled whatever happened before.
 */
export async function answerQuestion(
  store: GuardedStore,
  clock: Clock,
  harnesses: readonly Harness[],
  options: { sessionId: string; questionId: string; answer: unknown },
): Promise<void> {
  const { sessionId, questionId: id, answer } = options ?? ({} as never)
  assertLogId(sessionId, store.limits)
  if (typeof id !== 'string') throw new HarnessError('INVALID_ARGUMENT', 'answer needs the questionId of the question event (a string).')
  let failure: unknown
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const state = await readAndFold(store, sessionId)
    const question = state.questions.get(id)
    if (!question) {
      throw new HarnessError(
        'QUESTION_NOT_FOUND',
        `Session ${JSON.stringify(sessionId)} has no question ${JSON.stringify(id)}; use the questionId of the question event.`,
      )
    }
    const bad = findNonJson(answer)
    if (question.answer) {
      // The same answer already in the log is this answer: its reply was lost, or the caller tries again.
      if (!bad && jsonEqual(question.answer.answer, jsonCopy(answer) as JsonValue)) return wake(store, clock, sessionId)
      throw new HarnessError('ALREADY_ANSWERED', `Question ${JSON.stringify(id)} is answered already; a question takes one answer.`)
    }
    const turnId = state.toolCalls.get(question.ask.toolCallId)?.turnId
    if (!state.openTurn || state.openTurn.turnId !== turnId || state.results.has(question.ask.toolCallId)) {
      throw new HarnessError(
        'QUESTION_NOT_FOUND',
        `Question ${JSON.stringify(id)} belongs to a turn that has ended (finished or cancelled); nobody waits for its answer.`,
      )
    }
    const secrets = await resolvableSecrets(
      harnesses.find((h) => h.name === state.harness),
      state.secretNames,
    )
    // Before the schema check: its messages may repeat the answer.
    const held = secrets.find(answer)
    if (held) {
      throw new HarnessError(
        'RECORD_SECRET',
        `The answer holds a secret of the session at ${held.path} (${held.encoding}); the log must not keep it. Answer without the secret.`,
      )
    }
    if (bad) throw new HarnessError('ANSWER_INVALID', `The answer is not JSON at ${bad.path}: ${bad.reason}.`)
    const checked = z.fromJSONSchema(question.ask.schema as never).safeParse(answer)
    if (!checked.success) {
      const issues = checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')
      throw new HarnessError('ANSWER_INVALID', `The answer does not match the question's schema (${issues}). Send an answer that does.`)
    }
    const record: AnswerRecord = {
      type: 'harness.answer',
      toolCallId: question.ask.toolCallId,
      name: question.ask.name,
      answer: jsonCopy(answer) as JsonValue,
      at: clock.now(),
    }
    // Due before the answer lands too: a crash between the two must not leave an answered
    // question with nothing to wake its session (a worker that finds no answer only cancels again).
    await wake(store, clock, sessionId)
    try {
      await store.append(sessionId, state.nextSeq, [record])
    } catch (error) {
      // Someone else wrote meanwhile (maybe another answer), or nobody knows whether ours landed: read again and decide.
      if (isHarnessError(error, 'LOG_CONFLICT') || isOutcomeUnknown(error)) {
        failure = error
        continue
      }
      throw error
    }
    return wake(store, clock, sessionId)
  }
  if (isOutcomeUnknown(failure)) throw failure
  throw new HarnessError('SESSION_BUSY', `Session ${JSON.stringify(sessionId)} kept changing while answering; try again.`)
}

async function wake(store: GuardedStore, clock: Clock, sessionId: string): Promise<void> {
  await store.wakeups?.schedule(sessionId, await durableNow(store, clock))
}
