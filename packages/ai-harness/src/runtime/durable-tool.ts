import type { ApprovalSchemaConfig, InferSchemaType, SchemaInput, ServerTool, ToolDefinition, ToolExecutionContext } from '@tanstack/ai'
import { isWellFormedText } from '../contract/prepare-batch.js'
import type { LogRecord } from '../contract/types.js'
import type { IsJson } from '../json/json-types.js'
import { findNonJson, utf8Length } from '../json/check-json.js'
import { checkArgument, checkOptions, isObject, rules } from './check-options.js'
import { notInDurableSession, StepError, toolCallSettled, toolTimedOut } from './runtime-errors.js'
import { plainJournal, runStep, type StepRunContext } from './step-engine.js'
import { checkStepOptions, STEP_OPTIONS_RULE, type StepOptions, stepPolicy } from './step-retry.js'
import { MAX_TIMER_MS } from '../store/option-checks.js'
import { deadline, waitFor } from './timers.js'
import { PlainCompensations } from './plain-compensation.js'
import { checkStepDoOptions, type StepDoOptions } from './step-outcome-options.js'

export type { StepRunContext } from './step-engine.js'

/**
 * Compile-time guard: a step value must be JSON. When it is not (a `Date`, a `Map`,
 * a class instance with methods…), `step.do` asks for a third argument that cannot be
 * given, and TypeScript reports the missing argument by this name.
 */
export type JsonStepGuard<T> = IsJson<T> extends true ? [] : [step_value_must_be_JSON__return_date_toISOString_not_date: never]

/** A question for a person, with the schema its answer must match. */
export interface AskOptions<S extends SchemaInput> {
  /** Same on every run, like a step name. */
  name: string
  /** What the person sees. */
  message: string
  /** The answer's schema (zod or any Standard Schema with JSON Schema). */
  schema: S
}

/** Durable building blocks of a tool call. */
export interface Step {
  /**
   * Runs `fn` once per tool call and stores its JSON value in the session log before
   * resolving. After a crash, a stored step returns its value without running `fn`.
   * When `fn` throws, the failure is logged and the step fails with `STEP_FAILED`
   * (retries: see the form with options).
   */
  do<T, Guard extends JsonStepGuard<T> = JsonStepGuard<T>>(
    name: string,
    fn: (context: StepRunContext) => T | Promise<T>,
    ...guard: Guard
  ): Promise<T>
  /**
   * The same, with retries and a time limit per attempt: `step.do(name, { attempts: 3,
   * timeoutMs: 10_000 }, fn)`. Each failed attempt is logged; the next one waits
   * `delayMs × backoff^n` (at most `maxDelayMs`), in the process or, past `parkAfterMs`,
   * parked until its logged due time. After the last attempt, or a `NonRetryableError`,
   * the step fails with `STEP_FAILED`, on this run and on every later one.
   *
   * For a side effect that takes no idempotency key: `verify` (ask the system whether it
   * happened before running `fn` again after a crash), `once: true` (never run `fn` again;
   * throw `STEP_OUTCOME_UNKNOWN`), `undo` (a compensation that runs when the call fails).
   * See `StepOutcomeOptions`.
   */
  do<T, Guard extends JsonStepGuard<T> = JsonStepGuard<T>>(
    name: string,
    options: StepDoOptions<T>,
    fn: (context: StepRunContext) => T | Promise<T>,
    ...guard: Guard
  ): Promise<T>
  /** Waits `ms`, durably: the wake time is logged on the first run and kept across crashes. */
  sleep(name: string, ms: number): Promise<void>
  /** Asks a person; the session parks until any host answers. After a crash, returns the logged answer. */
  ask<S extends SchemaInput>(options: AskOptions<S>): Promise<InferSchemaType<S>>
}

/** An app record for the session log: a JSON object with a type outside `harness.`. */
export type AppRecord = LogRecord

/** Adds app records that land with the tool call's result, in the same append. */
export type AppendRecords = (records: readonly AppRecord[]) => void

/** The context of a durable tool's `execute`: the normal tool context plus `step`, `append` and `secret`. */
export type DurableToolContext<TContext = unknown> = ToolExecutionContext<TContext> & {
  step: Step
  append: AppendRecords
  /**
   * Reads a secret of the session by name. The value becomes one of the session's
   * secrets: steps and records that contain it are refused, results and events have it
   * replaced by a marker.
   */
  secret: (name: string) => Promise<string>
}

export type ReplayPolicy = 'safe' | 'never'

export interface DurableToolOptions {
  /**
   * What happens to a call cut by a crash: `'safe'` (default) runs it again, finished
   * steps returning their stored values; `'never'` gives the model a tool error, because
   * nobody knows whether the tool finished.
   */
  replay?: ReplayPolicy
  /** Step options for every `step.do` of the tool (the harness's `retry` under them, each step's own over them). */
  retry?: StepOptions
  /**
   * The longest one run of a call may take, in ms (at most 2^31 - 1). At the limit the
   * `signal` of its steps aborts and the call settles as a tool error (`TOOL_TIMEOUT`)
   * without waiting for `execute`. A side effect it started may still happen; a run
   * after a crash gets the whole time again.
   */
  timeoutMs?: number
}

/** The execute function of a durable tool. */
export type DurableExecute<TInput extends SchemaInput | undefined, TOutput extends SchemaInput | undefined> = (
  args: InferSchemaType<TInput>,
  context: DurableToolContext,
) => Promise<InferSchemaType<TOutput>> | InferSchemaType<TOutput>

/** Where the harness finds a durable tool's own execute and replay policy. */
export const DURABLE = Symbol.for('@tanstack/ai-harness/durable-tool')

export interface DurableMeta {
  readonly execute: (args: unknown, context: DurableToolContext) => unknown
  readonly replay: ReplayPolicy
  readonly retry: StepOptions | undefined
  readonly timeoutMs: number | undefined
}

/** A server tool that a harness session runs durably, and plain `chat()` runs as is. */
export type DurableTool<
  TInput extends SchemaInput | undefined = any,
  TOutput extends SchemaInput | undefined = any,
  TName extends string = string,
  TNeedsApproval extends boolean = boolean,
  TApprovalSchema extends ApprovalSchemaConfig | undefined = any,
> = ServerTool<TInput, TOutput, TName, unknown, TNeedsApproval, TApprovalSchema> & {
  readonly [DURABLE]: DurableMeta
}

/**
 * Marks the context a session gives a tool call (`LiveToolCall.contextFor`). A durable
 * tool's `execute` that gets a marked context runs on the session's steps; any other
 * context is plain `chat()`'s. A symbol key, so a wrapper's `{ ...context }` keeps it.
 */
export const SESSION_CONTEXT = Symbol.for('@tanstack/ai-harness/session-context')

/** True for a context a session made for a tool call (see `SESSION_CONTEXT`). */
export function isSessionContext(context: unknown): context is DurableToolContext {
  return typeof context === 'object' && context !== null && (context as { [SESSION_CONTEXT]?: unknown })[SESSION_CONTEXT] === true
}

/** The durable parts of a tool, or undefined for an ordinary tool. */
export function durableMetaOf(tool: unknown): DurableMeta | undefined {
  return typeof tool === 'object' && tool !== null ? (tool as { [DURABLE]?: DurableMeta })[DURABLE] : undefined
}

/**
 * Makes a tool whose side effects run once. `execute` gets `step` and `append` next to
 * the normal tool context. In a harness session each `step.do` is stored in the session
 * log; in plain `chat()` the same tool runs with `step.do` calling `fn` every time.
 *
 * The `replay` option of `durableTool` decides what a crash does to a cut call; a
 * `replay` field on the tool definition is not read.
 */
export function durableTool<
  TInput extends SchemaInput | undefined,
  TOutput extends SchemaInput | undefined,
  TName extends string,
  TNeedsApproval extends boolean,
  TApprovalSchema extends ApprovalSchemaConfig | undefined,
>(
  definition: ToolDefinition<TInput, TOutput, TName, TNeedsApproval, TApprovalSchema>,
  execute: DurableExecute<TInput, TOutput>,
  options: DurableToolOptions = {},
): DurableTool<TInput, TOutput, TName, TNeedsApproval, TApprovalSchema> {
  checkArgument('durableTool', 'tool definition', definition, TOOL_DEFINITION)
  checkArgument('durableTool', 'execute function', execute, rules.function('async (args, { step }) => ...'))
  const given: DurableToolOptions = options
  checkOptions('durableTool', options, DURABLE_TOOL_OPTIONS, 'options (the third argument)')
  checkStepOptions('durableTool', given.retry, 'option "retry"')
  const meta: DurableMeta = {
    execute: execute as DurableMeta['execute'],
    replay: given.replay ?? 'safe',
    retry: given.retry,
    timeoutMs: given.timeoutMs,
  }
  const plain = definition.server(async (args, context) => {
    // In a session the call's context is the session's (steps in the log, its own time
    // limit): a middleware that wraps this execute passes it on, and so runs in sessions too.
    if (isSessionContext(context)) return meta.execute(args, context) as never
    const life = { ended: false }
    const limit = deadline(context?.abortSignal ?? new AbortController().signal, meta.timeoutMs, () =>
      toolTimedOut(definition.name, meta.timeoutMs!),
    )
    // Seam (compensation.ts): the undo of finished steps runs when execute throws.
    const undos = new PlainCompensations(context?.toolCallId ?? 'plain', limit.signal)
    try {
      return (await limit.race(
        undos.runCall(() => Promise.resolve(meta.execute(args, plainContext(context, limit.signal, life, definition.name, meta, undos)))),
      )) as never
    } finally {
      limit.clear()
      life.ended = true
    }
  })
  return Object.assign(plain, { [DURABLE]: meta }) as never
}

const DURABLE_TOOL_OPTIONS = {
  replay: rules.oneOf(['safe', 'never']),
  retry: STEP_OPTIONS_RULE,
  timeoutMs: rules.number(`a number of milliseconds >= 1, at most ${MAX_TIMER_MS}, e.g. 60000`, 1, false, MAX_TIMER_MS),
}

/**
 * The arguments of `step.do`: `(name, fn)` or `(name, options, fn)`. Checked before
 * anything runs: a wrong one is `INVALID_ARGUMENT`.
 */
export function stepDoArguments(a: unknown, b: unknown): { options: StepDoOptions | undefined; fn: (context: StepRunContext) => unknown } {
  const [options, fn] = typeof a === 'function' ? [undefined, a] : [a, b]
  // Options after fn (the order of some other libraries) would be ignored: refuse them.
  if (typeof fn !== 'function' || (typeof a === 'function' && b !== undefined)) {
    throw new StepError(
      'INVALID_ARGUMENT',
      '',
      'step.do takes (name, fn) or (name, options, fn), e.g. step.do("charge", { attempts: 3 }, ({ idempotencyKey }) => ...).',
    )
  }
  // Seam (step-outcome-options.ts): the step options, and verify, once and undo.
  checkStepDoOptions(options)
  return { options, fn: fn as (context: StepRunContext) => unknown }
}

/** What `durableTool` and `agentTool` take as their first argument: the result of `toolDefinition(...)`. */
export const TOOL_DEFINITION = {
  accepts: "a tool definition from toolDefinition({ name, description, inputSchema }) of '@tanstack/ai'",
  test: (v: unknown) => isObject(v) && typeof v.name === 'string' && v.name !== '' && typeof v.server === 'function',
}

/**
 * The context a durable tool gets in plain `chat()`: no log, so steps run every time,
 * retries wait in the process, and nothing of a failed attempt is kept.
 */
function plainContext(
  context: ToolExecutionContext | undefined,
  signal: AbortSignal,
  life: { ended: boolean },
  toolName: string,
  meta: DurableMeta,
  undos: PlainCompensations,
): DurableToolContext {
  const toolCallId = context?.toolCallId ?? 'plain'
  const used = new Set<string>()
  // A call's life ends when its execute settles, in plain chat() too: a dangling step is a bug.
  const live = (what: string) => {
    if (life.ended) throw toolCallSettled(what, toolCallId, toolName)
  }
  const journal = plainJournal(toolCallId, toolName, signal, life, assertStepJson)
  // Nothing is the run's own failure in plain chat(): only its signal stops a step.
  const stop = { signal, isStop: () => false }
  const step: Step = {
    async do(name: string, a: unknown, b?: unknown) {
      live('step.do')
      assertStepName('step.do', name)
      const { options, fn } = stepDoArguments(a, b)
      claimStepName(used, name)
      // A once step has one attempt, in plain chat() too.
      const policy = stepPolicy(meta.retry, options, options?.once ? { attempts: 1 } : undefined)
      const value = await runStep(journal, name, policy, fn, stop)
      // Nothing crashes in plain chat(): verify is never called and once changes nothing; undo is registered.
      if (options?.undo) undos.register(name, value, options.undo)
      return value as never
    },
    async sleep(name, ms) {
      live('step.sleep')
      assertStepName('step.sleep', name)
      assertSleepMs(name, ms)
      claimStepName(used, name)
      await waitFor(ms, signal, () => signal.reason)
    },
    async ask() {
      live('step.ask')
      throw notInDurableSession('step.ask')
    },
  }
  return {
    ...(context as ToolExecutionContext),
    abortSignal: signal,
    emitCustomEvent: context?.emitCustomEvent ?? (() => {}),
    step,
    append: () => {
      live('append')
      throw notInDurableSession('append')
    },
    secret: async () => {
      throw notInDurableSession('secret()')
    },
  }
}

/**
 * The longest step, sleep or question name, in bytes of UTF-8. Names are parts of
 * idempotency keys and of every step record, so they stay short; a step's value has the
 * rest of the record.
 */
export const MAX_STEP_NAME_BYTES = 1024

/**
 * Checks a step, sleep or question name before anything runs or is written: a non-empty
 * string of well-formed Unicode without NUL, at most {@link MAX_STEP_NAME_BYTES}.
 */
export function assertStepName(what: string, name: unknown): asserts name is string {
  const refuse = (why: string): never => {
    throw new StepError(
      'INVALID_ARGUMENT',
      typeof name === 'string' ? name.slice(0, 64) : String(name),
      `${what} needs a name that ${why}. Use a short name that is the same on every run, e.g. "charge:" followed by the order id.`,
    )
  }
  if (typeof name !== 'string' || name.length === 0)
    refuse(`is a non-empty string (it got ${typeof name === 'string' ? 'an empty string' : typeof name})`)
  const text = name as string
  if (text.includes('\u0000')) refuse('holds no NUL (U+0000)')
  if (!isWellFormedText(text)) refuse('is well-formed Unicode (it holds a lone surrogate, half of a UTF-16 pair)')
  const bytes = utf8Length(text)
  if (bytes > MAX_STEP_NAME_BYTES) refuse(`is at most ${MAX_STEP_NAME_BYTES} bytes of UTF-8 (it has ${bytes})`)
}

/** A sleep takes a finite number of milliseconds >= 0. */
export function assertSleepMs(name: string, ms: unknown): asserts ms is number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new StepError('INVALID_ARGUMENT', name, `step.sleep(${JSON.stringify(name)}, ms) needs a finite number of milliseconds >= 0.`)
  }
}

/** The same step name twice in one tool call is a bug: the second would return the first's value. */
export function claimStepName(used: Set<string>, name: string): void {
  if (used.has(name)) {
    throw new StepError(
      'STEP_DUPLICATE_NAME',
      name,
      `Step ${JSON.stringify(name)} is used twice in one tool call. Give each step its own name, e.g. add the item id: \`${name}:\${id}\`.`,
    )
  }
  used.add(name)
}

export function assertStepJson(name: string, value: unknown): void {
  const bad = findNonJson(value, { allowUndefinedAtTop: true })
  if (bad) {
    throw new StepError(
      'STEP_NOT_JSON',
      name,
      `Step ${JSON.stringify(name)} returned a value that is not JSON at ${bad.path}: ${bad.reason}.`,
      bad.path,
    )
  }
}
