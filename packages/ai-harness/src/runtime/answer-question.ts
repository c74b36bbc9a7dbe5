import { fromJSONSchema } from 'zod'
import { HarnessError } from '../contract/errors.js'
import { assertLogId } from '../contract/prepare-batch.js'
import type { Clock } from '../contract/types.js'
import { findNonJson, jsonCopy, jsonEqual } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { logPersonInput, type PersonInputRules, secretsOf } from './person-input.js'
import type { AnswerRecord } from './records.js'
import type { GuardedStore } from './store-boundary.js'

/**
 * Logs the answer to a question of a parked session and makes the session due at once
 * (`logPersonInput`). Each attempt reads the log and decides from it, so a reply lost
 * after the append landed (or a retry of a call that failed that way) finds its own
 * answer and succeeds, and the wakeup is scheduled whatever happened before.
 */
export async function answerQuestion(
  store: GuardedStore,
  clock: Clock,
  rules: PersonInputRules,
  options: { sessionId: string; questionId: string; answer: unknown },
): Promise<void> {
  const { sessionId, questionId: id, answer } = options ?? ({} as never)
  assertLogId(sessionId, store.limits)
  if (typeof id !== 'string') throw new HarnessError('INVALID_ARGUMENT', 'answer needs the questionId of the question event (a string).')
  await logPersonInput(store, clock, sessionId, 'answering', async (state) => {
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
      if (!bad && jsonEqual(question.answer.answer, jsonCopy(answer) as JsonValue)) return undefined
      throw new HarnessError('ALREADY_ANSWERED', `Question ${JSON.stringify(id)} is answered already; a question takes one answer.`)
    }
    const call = state.calls.get(question.ask.toolCallId)
    if (!state.openTurn || state.openTurn.turnId !== call?.call?.turnId || call.result) {
      throw new HarnessError(
        'QUESTION_NOT_FOUND',
        `Question ${JSON.stringify(id)} belongs to a turn that has ended (finished or cancelled); nobody waits for its answer.`,
      )
    }
    // Before the schema check: its messages may repeat the answer.
    const held = (await secretsOf(rules, sessionId, state)).find(answer)
    if (held) {
      throw new HarnessError(
        'RECORD_SECRET',
        `The answer holds a secret of the session at ${held.path} (${held.encoding}); the log must not keep it. Answer without the secret.`,
      )
    }
    if (bad) throw new HarnessError('ANSWER_INVALID', `The answer is not JSON at ${bad.path}: ${bad.reason}.`)
    const checked = fromJSONSchema(question.ask.schema as never).safeParse(answer)
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
    return record
  })
}
