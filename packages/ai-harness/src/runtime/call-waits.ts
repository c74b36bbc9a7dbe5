import { convertSchemaToJsonSchema, validateWithStandardSchema } from '@tanstack/ai'
import { isWellFormedText } from '../contract/prepare-batch.js'
import type { LogRecord } from '../contract/types.js'
import { jsonCopy } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { loggedQuestionSchema, refuseSecretName } from '../secrets/step-checks.js'
import type { CallLog } from './call-log.js'
import { assertSleepMs, assertStepName } from './durable-tool.js'
import type { AnswerRejectedRecord } from './records.js'
import { StepError } from './runtime-errors.js'
import { questionId } from './session-fold.js'
import { assertNotRollingBack } from './step-outcome.js'
import { LATEST_WAKE_MS, waitTooLong } from './step-retry.js'

/**
 * `step.sleep` and `step.ask` of a tool call in a session: the waits whose time or
 * question is in the log, so a crash does not restart them.
 */

/** What a wait needs of its tool call (`LiveToolCall`). */
export interface WaitingCall {
  readonly log: CallLog
  /** Claims the name in the call (a second use throws `STEP_DUPLICATE_NAME`). */
  claimName(name: string): void
}

/** `step.sleep`: the wake time is logged on the first run; the wait is in the process or parked. */
export async function sleepStep(call: WaitingCall, name: string, ms: number): Promise<void> {
  const { log } = call
  const { session, toolCallId } = log
  log.assertLive('step.sleep')
  assertStepName('step.sleep', name)
  refuseSecretName(session.scanner, name, 'sleep')
  assertSleepMs(name, ms)
  let wakeAt = session.state.sleeps.get(toolCallId)?.get(name)
  const now = await log.durableNow()
  // Seam (step-outcome.ts): a call that rolls back does not wait.
  assertNotRollingBack(session, toolCallId, name, wakeAt !== undefined && wakeAt <= now)
  if (wakeAt === undefined) {
    // The wake time is fixed on the first run, so a crash does not restart the wait.
    wakeAt = Math.ceil(now + ms)
    if (!(wakeAt <= LATEST_WAKE_MS)) throw waitTooLong(`step.sleep(${JSON.stringify(name)}, ${ms})`, name)
    const record: LogRecord = { type: 'harness.sleep', toolCallId, name, wakeAt }
    log.assertFits('step.sleep', name, record, session.store.limits.maxRecordBytes, 'sleep name')
    call.claimName(name)
    await log.write('step.sleep', [record])
  } else {
    call.claimName(name)
  }
  await log.waitUntil('step.sleep', name, wakeAt, now)
  // What follows the sleep is a side effect of this host: its lease must still be fresh.
  await log.stop.own(() => session.leaseFresh())
}

/** `step.ask`: the question is logged on the first run; the call parks until any host answers it. */
export async function askStep(call: WaitingCall, options: { name: string; message: string; schema: unknown }): Promise<unknown> {
  const { log } = call
  const { session, toolCallId } = log
  log.assertLive('step.ask')
  if (typeof options !== 'object' || options === null) {
    throw new StepError('INVALID_ARGUMENT', '', 'step.ask takes { name, message, schema }.')
  }
  const { name, message, schema } = options
  assertStepName('step.ask', name)
  refuseSecretName(session.scanner, name, 'question')
  if (typeof message !== 'string' || message === '' || !isWellFormedText(message)) {
    throw new StepError(
      'INVALID_ARGUMENT',
      name,
      `step.ask({ name: ${JSON.stringify(name)}, message, schema }) needs a message for the person: a non-empty string of well-formed Unicode.`,
    )
  }
  const id = questionId(toolCallId, name)
  const known = session.state.questions.get(id)
  // Seam (step-outcome.ts): a call that rolls back asks nothing.
  assertNotRollingBack(session, toolCallId, name, known?.answer !== undefined)
  if (!known) {
    const record = questionRecord(log, name, message, schema)
    call.claimName(name)
    await log.write('step.ask', [record])
    return question(log, id, name, message, undefined)
  }
  call.claimName(name)
  if (!known.answer) return question(log, id, name, message, known.rejected?.reason)
  // Parse with the live schema so transforms and defaults apply, as on the first run.
  const parsed = await validateWithStandardSchema(schema, known.answer.answer)
  if (parsed.success) return parsed.data
  // The answer passed the logged JSON Schema but not the tool's own (a refine, a new
  // deploy): it is no answer. The question opens again, so a corrected answer from any
  // host completes the call.
  const reason = session.scanner.redactText(
    parsed.issues.map((issue) => `${issue.path?.join('.') || '(root)'}: ${issue.message}`).join('; '),
  )
  const rejected: AnswerRejectedRecord = { type: 'harness.answer.rejected', toolCallId, name, reason, at: session.clock.now() }
  await log.write('step.ask', [rejected])
  return question(log, id, name, message, reason)
}

/** The logged question: its message redacted, its schema as JSON Schema; it must fit a record. */
function questionRecord(log: CallLog, name: string, message: string, schema: unknown): LogRecord {
  const { session, toolCallId } = log
  const jsonSchema = convertSchemaToJsonSchema(schema as never)
  if (!jsonSchema) {
    throw new StepError(
      'INVALID_ARGUMENT',
      name,
      'step.ask needs a schema (zod or any Standard JSON Schema) so any host can check the answer.',
    )
  }
  const record: LogRecord = {
    type: 'harness.ask',
    toolCallId,
    name,
    message: session.scanner.redactText(message),
    schema: loggedQuestionSchema(session.scanner, name, jsonCopy(jsonSchema)) as JsonValue,
  }
  log.assertFits('step.ask', name, record, session.store.limits.maxRecordBytes, 'name, message or schema')
  return record
}

/** Parks the call on its question; the event tells the client what to answer, and why the last answer was refused. */
function question(log: CallLog, id: string, name: string, message: string, rejected: string | undefined): Promise<never> {
  const { session, toolCallId } = log
  return log.park('ask', null, {
    sessionId: session.sessionId,
    questionId: id,
    toolCallId,
    name,
    message,
    schema: session.state.questions.get(id)?.ask.schema ?? null,
    ...(rejected === undefined ? {} : { rejected }),
  })
}
