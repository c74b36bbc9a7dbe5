import { type AnyTool, convertSchemaToJsonSchema, type ToolExecutionContext, validateWithStandardSchema } from '@tanstack/ai'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import { isWellFormedText } from '../contract/prepare-batch.js'
import { type LogRecord, MAX_TIME_MS } from '../contract/types.js'
import { findNonJson, jsonBytes, jsonCopy } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import { type AgentMeta, agentMetaOf, childSessionId } from './agent-tool.js'
import {
  type AppendRecords,
  assertSleepMs,
  assertStepJson,
  assertStepName,
  claimStepName,
  type DurableToolContext,
  durableMetaOf,
  type Step,
  type StepRunContext,
  waitFor,
} from './durable-tool.js'
import { HARNESS_EVENT_NAMES } from './event-names.js'
import { asOwn, own, ownFailureIn } from './own-failures.js'
import { ParkSignal } from './park.js'
import { type AnswerRejectedRecord, isHarnessRecordType, type ToolResultRecord } from './records.js'
import { RecordError, StepError, toolCallSettled } from './runtime-errors.js'
import { questionId } from './session-fold.js'
import type { SessionRuntime } from './session-runtime.js'
import { scrubError } from '../secrets/error-scrub.js'
import { SECRET_USED_RECORD } from '../secrets/session-secrets.js'
import { loggedQuestionSchema, refuseSecretName } from '../secrets/step-checks.js'

/** How a tool call reaches the run it belongs to. */
export interface RunControl {
  /** Stops the run: the session's own failure, or a park signal. The first one wins. */
  stop(reason: object): void
  /** True once the run stopped (a park, a failure, cancel, hand-off, close). */
  readonly stopped: boolean
}

/**
 * One tool call in a durable session: its steps, its buffered app records, and the
 * append that settles it. The result record and the app records land in one append,
 * so a call cut before its result never wrote its records.
 *
 * A call lives while its `execute` runs. A step call after that (a promise left
 * running) throws `TOOL_CALL_SETTLED`, runs nothing and writes nothing. Every write and
 * every park signal of the call is the session's own: a failure of either stops the run,
 * whatever the tool does with it.
 */
export class ToolCallRun {
  readonly #usedNames = new Set<string>()
  readonly #records: LogRecord[] = []
  #ended = false
  /** The tool's abort signal: aborted when the run stops. */
  readonly signal: AbortSignal

  constructor(
    readonly session: SessionRuntime,
    /** The call's id in the session log (see `LoggedToolCall.id`). */
    readonly toolCallId: string,
    readonly toolName: string,
    signal: AbortSignal | undefined,
  ) {
    this.signal = signal ?? new AbortController().signal
  }

  get idPrefix(): string {
    return `${this.session.logId}:${this.toolCallId}:`
  }

  /** The call's execute settled: later step calls are refused. */
  end(): void {
    this.#ended = true
  }

  #assertLive(what: string): void {
    if (this.#ended) throw toolCallSettled(what, this.toolCallId, this.toolName)
  }

  /** Appends for this call while it lives; a failure of the write is the session's own. */
  async #write(what: string, records: LogRecord[]): Promise<void> {
    this.#assertLive(what)
    await asOwn(this.session, () => this.session.writer.append(records))
  }

  /** A durable time: the store's clock when it has one, so wake times do not depend on this host's clock. */
  #durableNow(): Promise<number> {
    const { store, clock } = this.session
    return asOwn(this.session, () => (store.now ? store.now() : clock.now()))
  }

  /** A record of this call must fit the store before anything runs: a step's name, a sleep, a question. */
  #assertFits(what: string, name: string, record: LogRecord, limit: number, part: string): void {
    const bytes = jsonBytes(record)
    if (bytes > limit) {
      throw new StepError(
        'INVALID_ARGUMENT',
        name.slice(0, 64),
        `${what}(${JSON.stringify(name.slice(0, 64))}…) makes a record of ${bytes} bytes before any value, over the limit of ${limit}; make the ${part} shorter. Nothing ran and nothing was written.`,
      )
    }
  }

  /** A park signal of this call: the run stops on purpose, the call stays open. */
  park(reason: ParkSignal['reason'], until: number | null, event: Record<string, unknown>): ParkSignal {
    return own(this.session, new ParkSignal(this.toolCallId, reason, until, event)) as ParkSignal
  }

  readonly step: Step = {
    do: async (name: string, fn: (context: StepRunContext) => unknown, ..._guard: unknown[]) => {
      this.#assertLive('step.do')
      assertStepName('step.do', name)
      refuseSecretName(this.session.scanner, name, 'step')
      this.#assertFits('step.do', name, { type: 'harness.step', toolCallId: this.toolCallId, name }, this.session.maxStepBytes, 'step name')
      claimStepName(this.#usedNames, name)
      const stored = this.session.state.steps.get(this.toolCallId)?.get(name)
      if (stored) return jsonCopy(stored.value) as never
      // A step must not start a side effect it could never log.
      await asOwn(this.session, () => this.session.writer.assertWritable())
      const value = await fn({ idempotencyKey: `${this.idPrefix}${name}`, signal: this.signal })
      // fn finished after the call ended (a dangling step): its value belongs to no call.
      this.#assertLive('step.do')
      // Its path can name a key that holds a secret.
      scrubbed(this.session, () => assertStepJson(name, value))
      const secret = this.session.scanner.find(value)
      if (secret) {
        throw new StepError(
          'STEP_SECRET',
          name,
          `Step ${JSON.stringify(name)} returned a secret of the session at ${secret.path} (${secret.encoding}). The log must not keep it: read the secret outside step.do and return an id, not a token.`,
          secret.path,
        )
      }
      const record: LogRecord = { type: 'harness.step', toolCallId: this.toolCallId, name }
      if (value !== undefined) record.value = jsonCopy(value) as JsonValue
      const bytes = jsonBytes(record)
      if (bytes > this.session.maxStepBytes) {
        throw new StepError(
          'STEP_TOO_LARGE',
          name,
          `Step ${JSON.stringify(name)} returned ${bytes} bytes of JSON, over the limit of ${this.session.maxStepBytes}. Keep step values small: store big data elsewhere and return its id.`,
        )
      }
      await this.#write('step.do', [record])
      return jsonCopy(value) as never
    },
    sleep: async (name: string, ms: number) => {
      this.#assertLive('step.sleep')
      assertStepName('step.sleep', name)
      refuseSecretName(this.session.scanner, name, 'sleep')
      assertSleepMs(name, ms)
      const { state } = this.session
      let wakeAt = state.sleeps.get(this.toolCallId)?.get(name)
      const now = await this.#durableNow()
      if (wakeAt === undefined) {
        // The wake time is fixed on the first run, so a crash does not restart the wait.
        wakeAt = Math.ceil(now + ms)
        if (!(wakeAt <= MAX_TIME_MS)) {
          throw new StepError(
            'INVALID_ARGUMENT',
            name,
            `step.sleep(${JSON.stringify(name)}, ${ms}) would wake after ${new Date(MAX_TIME_MS).toISOString()}, the latest time a store keeps (MAX_TIME_MS). Sleep for less; nothing was written.`,
          )
        }
        const record: LogRecord = { type: 'harness.sleep', toolCallId: this.toolCallId, name, wakeAt }
        this.#assertFits('step.sleep', name, record, this.session.store.limits.maxRecordBytes, 'sleep name')
        claimStepName(this.#usedNames, name)
        await this.#write('step.sleep', [record])
      } else {
        claimStepName(this.#usedNames, name)
      }
      const remaining = wakeAt - now
      if (remaining <= 0) return
      if (remaining <= this.session.parkAfterMs) {
        // The wake time is logged: a run stopped while it waits goes on waiting when the session resumes.
        await waitFor(remaining, this.signal, () =>
          own(
            this.session,
            new HarnessError(
              'LEASE_LOST',
              `The run stopped (cancel, hand-off, close or a lost lease) while step.sleep(${JSON.stringify(name)}) waited; this host writes nothing more to the call, and the sleep goes on when the session resumes.`,
            ),
          ),
        )
        return
      }
      throw this.park('sleep', wakeAt, { name, wakeAt })
    },
    ask: async (options: { name: string; message: string; schema: unknown }) => {
      this.#assertLive('step.ask')
      if (typeof options !== 'object' || options === null) {
        throw new StepError('INVALID_ARGUMENT', '', 'step.ask takes { name, message, schema }.')
      }
      const { name, message, schema } = options
      assertStepName('step.ask', name)
      refuseSecretName(this.session.scanner, name, 'question')
      if (typeof message !== 'string' || message === '' || !isWellFormedText(message)) {
        throw new StepError(
          'INVALID_ARGUMENT',
          name,
          `step.ask({ name: ${JSON.stringify(name)}, message, schema }) needs a message for the person: a non-empty string of well-formed Unicode.`,
        )
      }
      const id = questionId(this.toolCallId, name)
      const known = this.session.state.questions.get(id)
      if (!known) {
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
          toolCallId: this.toolCallId,
          name,
          message: this.session.scanner.redactText(message),
          schema: loggedQuestionSchema(this.session.scanner, name, jsonCopy(jsonSchema)) as JsonValue,
        }
        this.#assertFits('step.ask', name, record, this.session.store.limits.maxRecordBytes, 'name, message or schema')
        claimStepName(this.#usedNames, name)
        await this.#write('step.ask', [record])
        throw this.#question(id, name, message, undefined)
      }
      claimStepName(this.#usedNames, name)
      if (!known.answer) throw this.#question(id, name, message, known.rejected?.reason)
      // Parse with the live schema so transforms and defaults apply, as on the first run.
      const parsed = await validateWithStandardSchema(schema, known.answer.answer)
      if (parsed.success) return parsed.data as never
      // The answer passed the logged JSON Schema but not the tool's own (a refine, a new
      // deploy): it is no answer. The question opens again, so a corrected answer from any
      // host completes the call.
      const reason = this.session.scanner.redactText(
        parsed.issues.map((issue) => `${issue.path?.join('.') || '(root)'}: ${issue.message}`).join('; '),
      )
      const rejected: AnswerRejectedRecord = {
        type: 'harness.answer.rejected',
        toolCallId: this.toolCallId,
        name,
        reason,
        at: this.session.clock.now(),
      }
      await this.#write('step.ask', [rejected])
      throw this.#question(id, name, message, reason)
    },
  } as Step

  /** Parks the call on its question; the event tells the client what to answer, and why the last answer was refused. */
  #question(id: string, name: string, message: string, rejected: string | undefined): ParkSignal {
    return this.park('ask', null, {
      sessionId: this.session.logId,
      questionId: id,
      toolCallId: this.toolCallId,
      name,
      message,
      schema: this.session.state.questions.get(id)?.ask.schema ?? null,
      ...(rejected === undefined ? {} : { rejected }),
    })
  }

  readonly append: AppendRecords = (records) => {
    this.#assertLive('append')
    if (!Array.isArray(records))
      throw new RecordError('RECORD_INVALID', 'append takes an array of records: append([{ type: "app.note", ... }]).')
    const checked: LogRecord[] = []
    records.forEach((record, index) => {
      const at = `records[${index}]`
      if (typeof record !== 'object' || record === null || Array.isArray(record) || typeof record.type !== 'string' || record.type === '') {
        throw new RecordError('RECORD_INVALID', `${at} must be an object with a string "type", like { type: "app.memory", ... }.`, at)
      }
      if (isHarnessRecordType(record.type)) {
        throw new RecordError(
          'RECORD_TYPE_RESERVED',
          `${at} has type ${JSON.stringify(record.type)}; types beginning "harness." are reserved. Use your app's own prefix, e.g. "app.${record.type.slice('harness.'.length)}".`,
          at,
        )
      }
      const bad = findNonJson(record, { root: at })
      if (bad) throw new RecordError('RECORD_NOT_JSON', `${bad.path}: ${bad.reason}.`, bad.path)
      const secret = this.session.scanner.find(record, at)
      if (secret) {
        throw new RecordError(
          'RECORD_SECRET',
          `${secret.path} holds a secret of the session (${secret.encoding}). The log must not keep it: log an id, not the token.`,
          secret.path,
        )
      }
      checked.push(jsonCopy(record))
    })
    this.#records.push(...checked)
  }

  /**
   * Reads a secret by name and makes it one of the session's secrets. The first read of
   * a name logs the name (never the value) before the tool gets it, so whoever opens the
   * session later resolves it again and keeps it out of the log too.
   */
  readonly secret = async (name: string): Promise<string> => {
    const { sessionSecrets, writer } = this.session
    const { value, firstUse } = await sessionSecrets.read(name)
    if (firstUse) {
      await writer.append([{ type: SECRET_USED_RECORD, name }])
      sessionSecrets.markUsed(name)
    }
    return value
  }

  contextFor(context: ToolExecutionContext | undefined): DurableToolContext {
    return {
      ...(context as ToolExecutionContext),
      emitCustomEvent: context?.emitCustomEvent ?? (() => {}),
      step: this.step,
      // A refusal names the record's type and path, which may hold a secret.
      append: (records) => scrubbed(this.session, () => this.append(records)),
      secret: this.secret,
    }
  }

  /** Records the outcome with the buffered app records, in one append. */
  async settle(ok: boolean, result: JsonValue): Promise<void> {
    const record: ToolResultRecord = {
      type: 'harness.tool.result',
      toolCallId: this.toolCallId,
      toolName: this.toolName,
      ok,
      result,
      cut: false,
    }
    await this.session.writer.append([record, ...this.#records])
  }

  /** Records the outcome without the app records (they were part of what did not fit). */
  async settleAlone(ok: boolean, result: JsonValue): Promise<void> {
    this.#records.length = 0
    await this.settle(ok, result)
  }
}

/** Runs `check`; an error it throws leaves without the session's secrets. */
function scrubbed(session: SessionRuntime, check: () => void): void {
  try {
    check()
  } catch (error) {
    throw scrubError(session.scanner, error)
  }
}

/** The value `chat()` makes of a tool's return value, so the log keeps what the model saw. */
function modelValue(value: unknown): JsonValue {
  if (typeof value === 'string') {
    try {
      return JSON.parse(value) as JsonValue
    } catch {
      return value
    }
  }
  return jsonCopy(value ?? null) as JsonValue
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : typeof error === 'string' ? error : 'Unknown error'
}

/**
 * Wraps a tool so that, in a durable session, its call is settled in the log: steps
 * memoized, app records buffered, hooks applied, secrets removed, and the result the
 * model sees appended before `chat()` gets it. Whatever the tool throws is a tool error
 * for the model, except the session's own failures and park signals, which stop the run.
 */
export function wrapTool(session: SessionRuntime, tool: AnyTool, control: RunControl): AnyTool {
  const meta = durableMetaOf(tool)
  const agent = agentMetaOf(tool)
  const original = tool.execute
  if (!original && !meta && !agent) return tool
  return {
    ...tool,
    execute: async (args: unknown, context?: ToolExecutionContext) => {
      const toolCallId = context?.toolCallId
      if (!toolCallId) throw new HarnessError('INVALID_ARGUMENT', 'A durable session needs tool call ids from the adapter.')
      // A stopped run starts no more calls: they stay open, and run when the session resumes.
      if (control.stopped) throw own(session, new Error('The run stopped before this tool call started; it runs when the session resumes.'))
      const logged = session.state.results.get(toolCallId)
      if (logged) {
        if (logged.ok) return logged.result
        throw new Error(errorMessage((logged.result as { error?: unknown })?.error))
      }
      const call = new ToolCallRun(session, toolCallId, tool.name, context?.abortSignal)
      let ok: boolean
      let value: unknown
      let error: unknown
      try {
        value = agent
          ? await runAgentCall(call, agent, args, context)
          : meta
            ? await meta.execute(args, call.contextFor(context))
            : await original!(args, call.contextFor(context))
        ok = true
      } catch (caught) {
        const mine = ownFailureIn(session, caught)
        if (mine) {
          control.stop(mine)
          throw caught
        }
        ok = false
        error = caught
      } finally {
        call.end()
      }
      for (const hook of session.harness.hooks) {
        try {
          const replaced = await hook({ toolName: tool.name, toolCallId, args, ok, result: value, error })
          if (replaced && typeof replaced === 'object' && 'result' in replaced) {
            ok = true
            value = replaced.result
            error = undefined
          }
        } catch (hookError) {
          // A failing hook fails the call, as the model will see it; it must still be settled in the log.
          ok = false
          value = undefined
          error = hookError
        }
      }
      let seen: JsonValue
      if (ok) {
        try {
          seen = session.scanner.redact(modelValue(value))
        } catch (caught) {
          ok = false
          seen = { error: session.scanner.redactText(`The tool returned a value that cannot be sent as JSON: ${errorMessage(caught)}`) }
        }
      } else {
        seen = { error: session.scanner.redactText(errorMessage(error)) }
      }
      try {
        await call.settle(ok, seen)
      } catch (caught) {
        if (!isHarnessError(caught, 'RECORD_TOO_LARGE')) {
          control.stop(own(session, caught))
          throw caught
        }
        // A result (or its records) over the store's limits must not stop the turn: the
        // model gets a tool error it can act on, and the log keeps that error alone.
        ok = false
        seen = {
          error: session.scanner.redactText(
            `The result of ${tool.name} is too large to keep in the session log (${caught.message}) Return an id or a summary instead.`,
          ),
        }
        try {
          await call.settleAlone(false, seen)
        } catch (again) {
          control.stop(own(session, again))
          throw again
        }
      }
      if (!ok) throw new Error((seen as { error: string }).error)
      return seen
    },
  } as AnyTool
}

/**
 * Failures of a child session's machinery that may pass (another host drives the child,
 * a conflict, a store outage): they stop the parent's run, and the parent call keeps its
 * place. Any other failure of the child is a tool error of the parent call.
 */
const PASSING_CHILD_FAILURES = new Set(['LOG_CONFLICT', 'LEASE_LOST', 'LEASE_HELD', 'STORE_UNAVAILABLE', 'SESSION_BUSY'])

function childFailure(session: SessionRuntime, error: unknown): unknown {
  if (isHarnessError(error) && !PASSING_CHILD_FAILURES.has(error.code)) return error
  return own(session, error)
}

/**
 * Runs (or continues) the child session of an agent-tool call. A child that waits for a
 * person parks the parent call; its question is forwarded on the parent's stream.
 */
async function runAgentCall(
  call: ToolCallRun,
  agent: AgentMeta,
  args: unknown,
  context: ToolExecutionContext | undefined,
): Promise<unknown> {
  const { session, toolCallId } = call
  const childId = childSessionId(session.logId, toolCallId)
  if (session.state.parked.get(toolCallId)?.reason === 'agent') {
    // The call waited on its child, so the child's log exists, unless it was deleted: then
    // opening it would bring a deleted session back. Nobody knows what it did.
    const [first] = await asOwn(session, () => session.store.read(childId, { after: 0, limit: 1 }))
    if (!first) {
      throw new Error(
        `The session of the agent ${JSON.stringify(agent.harness.name)} (${childId}) was deleted while this call waited for it; nobody knows what it did. Check its effects before you call it again.`,
      )
    }
  }
  let child: Awaited<ReturnType<SessionRuntime['openChild']>>
  try {
    child = await session.openChild(agent.harness, childId, { sessionId: session.logId, toolCallId })
  } catch (error) {
    throw childFailure(session, error)
  }
  try {
    const forward = (chunk: { type: string; name?: string; value?: unknown }) => {
      if (chunk.type === 'CUSTOM' && chunk.name === HARNESS_EVENT_NAMES.question) {
        // The parent's stream redacts it, keeping its ids and names.
        context?.emitCustomEvent?.(HARNESS_EVENT_NAMES.question, chunk.value as Record<string, unknown>)
      }
    }
    let log: Awaited<ReturnType<typeof child.entries>>
    try {
      const entries = await child.entries()
      const started = entries.some((e) => e.record.type === 'harness.turn.started')
      const stream = started ? child.resume() : child.send(agent.prompt(args))
      for await (const chunk of stream) forward(chunk as never)
      if (child.status === 'parked') throw call.park('agent', null, { childSessionId: childId })
      log = await child.entries()
    } catch (error) {
      throw ownFailureIn(session, error) ? error : childFailure(session, error)
    }
    if (!log.some((e) => e.record.type === 'harness.turn.finished')) {
      throw new Error(`The agent ${JSON.stringify(agent.harness.name)} did not finish its turn.`)
    }
    const answers = log.filter((e) => e.record.type === 'harness.assistant' && (e.record.toolCalls as unknown[]).length === 0)
    return String(answers.at(-1)?.record.text ?? '')
  } finally {
    await child.close().catch(() => {})
  }
}
