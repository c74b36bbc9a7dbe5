import { type AnyTool, convertSchemaToJsonSchema, type ToolExecutionContext, validateWithStandardSchema } from '@tanstack/ai'
import { HarnessError, isHarnessError } from '../contract/errors.js'
import type { LogRecord } from '../contract/types.js'
import { findNonJson, jsonBytes, jsonCopy } from '../json/check-json.js'
import type { JsonValue } from '../json/json-types.js'
import {
  type AppendRecords,
  assertStepJson,
  claimStepName,
  type DurableToolContext,
  durableMetaOf,
  type Step,
  type StepRunContext,
} from './durable-tool.js'
import { type AgentMeta, agentMetaOf, childSessionId } from './agent-tool.js'
import { isParkSignal, ParkSignal } from './park.js'
import { HARNESS_EVENT_NAMES } from './event-names.js'
import { isHarnessRecordType, type ToolResultRecord } from './records.js'
import { questionId } from './session-fold.js'
import { RecordError, StepError } from './runtime-errors.js'
import type { SessionRuntime } from './session-runtime.js'
import { scrubError } from '../secrets/error-scrub.js'
import { SECRET_USED_RECORD } from '../secrets/session-secrets.js'
import { loggedQuestionSchema, refuseSecretName } from '../secrets/step-checks.js'

/** Errors that must stop the whole run, not become a tool error for the model. */
export function isFatal(error: unknown): boolean {
  return isHarnessError(error) && (error.code === 'LOG_CONFLICT' || error.code === 'LEASE_LOST' || error.code === 'STORE_UNAVAILABLE')
}

/**
 * One tool call in a durable session: its steps, its buffered app records, and the
 * append that settles it. The result record and the app records land in one append,
 * so a call cut before its result never wrote its records.
 */
export class ToolCallRun {
  readonly #usedNames = new Set<string>()
  readonly #records: LogRecord[] = []

  constructor(
    readonly session: SessionRuntime,
    readonly toolCallId: string,
    readonly toolName: string,
  ) {}

  get idPrefix(): string {
    return `${this.session.logId}:${this.toolCallId}:`
  }

  readonly step: Step = {
    do: async (name: string, fn: (context: StepRunContext) => unknown, ..._guard: unknown[]) => {
      refuseSecretName(this.session.scanner, name, 'step')
      claimStepName(this.#usedNames, name)
      const stored = this.session.state.steps.get(this.toolCallId)?.get(name)
      if (stored) return jsonCopy(stored.value) as never
      this.session.writer.assertWritable()
      const value = await fn({ idempotencyKey: `${this.idPrefix}${name}` })
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
      await this.session.writer.append([record])
      return jsonCopy(value) as never
    },
    sleep: async (name: string, ms: number) => {
      refuseSecretName(this.session.scanner, name, 'sleep')
      claimStepName(this.#usedNames, name)
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new StepError('INVALID_ARGUMENT', name, `step.sleep(${JSON.stringify(name)}, ms) needs a finite number of milliseconds >= 0.`)
      }
      const { state, clock, writer } = this.session
      let wakeAt = state.sleeps.get(this.toolCallId)?.get(name)
      if (wakeAt === undefined) {
        // The wake time is fixed on the first run, so a crash does not restart the wait.
        wakeAt = Math.ceil(clock.now() + ms)
        await writer.append([{ type: 'harness.sleep', toolCallId: this.toolCallId, name, wakeAt }])
      }
      const remaining = wakeAt - clock.now()
      if (remaining <= 0) return
      if (remaining <= this.session.parkAfterMs) {
        await new Promise((resolve) => setTimeout(resolve, remaining))
        return
      }
      throw new ParkSignal(this.toolCallId, 'sleep', wakeAt, { name, wakeAt })
    },
    ask: async (options: { name: string; message: string; schema: unknown }) => {
      const { name, message, schema } = options ?? ({} as never)
      refuseSecretName(this.session.scanner, name, 'question')
      claimStepName(this.#usedNames, name)
      if (typeof message !== 'string' || message === '') {
        throw new StepError(
          'INVALID_ARGUMENT',
          name,
          `step.ask({ name: ${JSON.stringify(name)}, message, schema }) needs a message for the person.`,
        )
      }
      const id = questionId(this.toolCallId, name)
      const known = this.session.state.questions.get(id)
      if (known?.answer) {
        // Parse with the live schema so transforms and defaults apply, as on the first run.
        const parsed = await validateWithStandardSchema(schema, known.answer.answer)
        if (!parsed.success) {
          throw new StepError(
            'ANSWER_INVALID',
            name,
            `The logged answer to ${JSON.stringify(name)} no longer matches the tool's schema; keep question schemas compatible across deploys.`,
          )
        }
        return parsed.data as never
      }
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
        await this.session.writer.append([record])
      }
      throw new ParkSignal(this.toolCallId, 'ask', null, {
        sessionId: this.session.logId,
        questionId: id,
        toolCallId: this.toolCallId,
        name,
        message,
        schema: this.session.state.questions.get(id)?.ask.schema ?? null,
      })
    },
  } as Step

  readonly append: AppendRecords = (records) => {
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
 * model sees appended before `chat()` gets it.
 */
export function wrapTool(session: SessionRuntime, tool: AnyTool, onFatal: (error: unknown) => void): AnyTool {
  const meta = durableMetaOf(tool)
  const agent = agentMetaOf(tool)
  const original = tool.execute
  if (!original && !meta && !agent) return tool
  return {
    ...tool,
    execute: async (args: unknown, context?: ToolExecutionContext) => {
      const toolCallId = context?.toolCallId
      if (!toolCallId) throw new HarnessError('INVALID_ARGUMENT', 'A durable session needs tool call ids from the adapter.')
      const logged = session.state.results.get(toolCallId)
      if (logged) {
        if (logged.ok) return logged.result
        throw new Error(errorMessage((logged.result as { error?: unknown })?.error))
      }
      const call = new ToolCallRun(session, toolCallId, tool.name)
      let ok: boolean
      let value: unknown
      let error: unknown
      try {
        value = agent
          ? await runAgentCall(session, toolCallId, agent, args, context)
          : meta
            ? await meta.execute(args, call.contextFor(context))
            : await original!(args, call.contextFor(context))
        ok = true
      } catch (caught) {
        if (isFatal(caught) || isParkSignal(caught)) {
          onFatal(caught)
          throw caught
        }
        ok = false
        error = caught
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
          onFatal(caught)
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
          onFatal(again)
          throw again
        }
      }
      if (!ok) throw new Error((seen as { error: string }).error)
      return seen
    },
  } as AnyTool
}

/**
 * Runs (or continues) the child session of an agent-tool call. A child that waits for a
 * person parks the parent call; its question is forwarded on the parent's stream.
 */
async function runAgentCall(
  session: SessionRuntime,
  toolCallId: string,
  agent: AgentMeta,
  args: unknown,
  context: ToolExecutionContext | undefined,
): Promise<unknown> {
  const childId = childSessionId(session.logId, toolCallId)
  const child = await session.openChild(agent.harness, childId, { sessionId: session.logId, toolCallId })
  try {
    const forward = (chunk: { type: string; name?: string; value?: unknown }) => {
      if (chunk.type === 'CUSTOM' && chunk.name === HARNESS_EVENT_NAMES.question) {
        // The parent's stream redacts it, keeping its ids and names.
        context?.emitCustomEvent?.(HARNESS_EVENT_NAMES.question, chunk.value as Record<string, unknown>)
      }
    }
    const entries = await child.entries()
    const started = entries.some((e) => e.record.type === 'harness.turn.started')
    const stream = started ? child.resume() : child.send(agent.prompt(args))
    for await (const chunk of stream) forward(chunk as never)
    if (child.status === 'parked') {
      throw new ParkSignal(toolCallId, 'agent', null, { childSessionId: childId })
    }
    const log = await child.entries()
    if (!log.some((e) => e.record.type === 'harness.turn.finished')) {
      throw new Error(`The agent ${JSON.stringify(agent.harness.name)} did not finish its turn.`)
    }
    const answers = log.filter((e) => e.record.type === 'harness.assistant' && (e.record.toolCalls as unknown[]).length === 0)
    return String(answers.at(-1)?.record.text ?? '')
  } finally {
    await child.close()
  }
}
