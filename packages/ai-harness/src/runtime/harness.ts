import type { AnyTextAdapter, AnyTool, ChatMiddleware } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import { checkOptions, isObject, type OptionRules, rules } from './check-options.js'
import { durableMetaOf, type ReplayPolicy } from './durable-tool.js'
import { checkStepOptions, STEP_OPTIONS_RULE, type StepOptions } from './step-retry.js'
import type { LoggedToolCall } from './records.js'
import { isAgentTool } from './tool-marks.js'

/** What a tool-result hook sees: the outcome of one tool call, before it is logged. */
export interface ToolCallOutcome {
  readonly toolName: string
  readonly toolCallId: string
  readonly args: unknown
  readonly ok: boolean
  readonly result?: unknown
  readonly error?: unknown
}

/**
 * Runs after a tool call, in order, before the result is logged and shown to the model.
 * Return `{ result }` to replace the result (also an error's); the replacement is what
 * the model sees and what the log keeps. Unlike TanStack AI middleware's
 * `onAfterToolCall`, which only observes, this one may change the result.
 */
export type ToolResultHook = (outcome: ToolCallOutcome) => void | { result: unknown } | Promise<void | { result: unknown }>

/**
 * The old name of {@link ToolResultHook}.
 * @deprecated Use `ToolResultHook` (the hook is `HarnessOptions.replaceToolResult`).
 */
export type AfterToolCallHook = ToolResultHook

export interface HarnessOptions {
  /** Stored in each session's first record; a session opens only with the harness that made it. */
  name: string
  /** Any TanStack AI text adapter. */
  adapter: AnyTextAdapter
  tools?: ReadonlyArray<AnyTool>
  systemPrompts?: string[]
  /** TanStack AI chat middleware, passed to every `chat()` run of the session. */
  middleware?: ChatMiddleware<any>[]
  /**
   * Hooks that may replace a tool's result before the model and the log see it (see
   * `ToolResultHook`). Named apart from TanStack AI middleware's `onAfterToolCall`, which
   * only observes a call; a middleware's hook runs as it does in `chat()`.
   */
  replaceToolResult?: ToolResultHook | ToolResultHook[]
  /**
   * The old name of `replaceToolResult`; hooks given here run after those given there.
   * @deprecated Use `replaceToolResult`: this name collides with TanStack AI middleware's
   * observe-only `onAfterToolCall`, and this hook may replace the result.
   */
  onAfterToolCall?: ToolResultHook | ToolResultHook[]
  /**
   * Replay policy of ordinary (non-durable) tools by name. Ordinary tools default to
   * `'never'`: after a crash they get a tool error instead of running again.
   */
  replay?: Record<string, ReplayPolicy>
  /** The tool error a cut call gets after a crash. */
  cutToolError?: string
  /**
   * Step options for every `step.do` of the harness's tools, e.g. `{ attempts: 3 }`; a
   * tool's `retry` and each step's own options override them, key by key. Default: one
   * attempt, no time limit.
   */
  retry?: StepOptions
  /** Largest step record in bytes of JSON. Default: 64 KiB, and never above the store's record limit. */
  maxStepBytes?: number
  /**
   * Resolves secrets by name: for tools that read one with `secret(name)` that was not
   * given when the session opened, for every name in `secretNames`, and, when a session
   * opens again, for every secret its tools read before (the log keeps their names, never
   * their values). A name it cannot resolve then refuses the open with `SECRET_NOT_FOUND`.
   */
  resolveSecret?: (name: string) => string | undefined | Promise<string | undefined>
  /**
   * Secrets every session of this harness knows from the moment it opens, by name:
   * each is taken from `host.open({ secrets })` or else from `resolveSecret`. List the
   * secrets the model could repeat before any tool read them (a key in a system prompt
   * of another service, a token a user may paste), so the log and the stream never keep them.
   */
  secretNames?: readonly string[]
  /**
   * Sleeps (and waits before a step's retry) up to this long happen in the process;
   * longer ones park the session and a worker resumes it at the wake time. Default 5 000 ms.
   */
  parkAfterMs?: number
  /** Passed to `chat()`. */
  modelOptions?: Record<string, unknown>
  /** chat()'s debug logging; default off (the harness throws typed errors instead). */
  debug?: boolean | Record<string, unknown>
  agentLoopStrategy?: (state: any) => boolean
}

/** The default text of the tool error a call cut by a crash gets. */
export const DEFAULT_CUT_TOOL_ERROR =
  'This tool call was interrupted by a crash and nobody knows whether it finished. Check its effect (for example, look the order up) before you call it again.'

/** Marks the objects `defineHarness` makes, so `agentTool` can tell a harness from a look-alike. */
const HARNESS = Symbol.for('@tanstack/ai-harness/harness')

/** True for a harness made by `defineHarness`. */
export const isHarness = (value: unknown): value is Harness => isObject(value) && (value as { [HARNESS]?: unknown })[HARNESS] === true

/** A harness: the agent's model, tools and rules, ready to run durable sessions on any host. */
export interface Harness {
  readonly name: string
  readonly options: HarnessOptions
  readonly tools: ReadonlyArray<AnyTool>
  toolNamed(name: string): AnyTool | undefined
  /** What a crash does to a cut call of this harness's tool named `toolName`. */
  replayOf(toolName: string): ReplayPolicy
  /** What a crash does to a cut call of `tool`, the tool a run had (a harness tool, or one a middleware added). */
  replayOfTool(tool: AnyTool): ReplayPolicy
  /**
   * What a crash does to the logged call `call`: the policy logged with the call (the tool
   * the run had), else the harness's tool of that name; a call of a tool nobody has is
   * never run again.
   */
  replayOfCall(call: LoggedToolCall): ReplayPolicy
  readonly hooks: ToolResultHook[]
  readonly cutToolError: string
}

const isTool = (tool: unknown) => isObject(tool) && typeof tool.name === 'string' && tool.name !== ''
const isHook = (hook: unknown) => typeof hook === 'function'

const HOOKS_RULE = {
  accepts: 'a hook function, or an array of them: (outcome) => void | { result }',
  test: (v: unknown) => isHook(v) || (Array.isArray(v) && v.every(isHook)),
}

const HARNESS_OPTIONS: OptionRules = {
  name: rules.nonEmptyString("{ name: 'checkout' } (sessions record which harness made them)", true),
  adapter: {
    accepts: 'a TanStack AI text adapter, e.g. adapter: openaiText("gpt-5.5")',
    test: (v) => isObject(v) && v.kind === 'text' && typeof v.chatStream === 'function',
    required: true,
  },
  tools: rules.arrayOf('an array of tools (toolDefinition(...).server(...), durableTool(...) or agentTool(...))', isTool),
  systemPrompts: rules.arrayOf('an array of strings', (v) => typeof v === 'string'),
  middleware: rules.arrayOf('an array of TanStack AI chat middleware objects', isObject),
  replaceToolResult: HOOKS_RULE,
  onAfterToolCall: HOOKS_RULE,
  replay: {
    accepts: "an object of tool names to 'safe' or 'never', e.g. { lookup: 'safe' }",
    test: (v) => isObject(v) && Object.values(v).every((p) => p === 'safe' || p === 'never'),
  },
  cutToolError: rules.nonEmptyString("'The lookup was interrupted; check before you try again.'"),
  maxStepBytes: rules.number('a whole number of bytes >= 1, e.g. 65536', 1, true),
  resolveSecret: rules.function('(name) => process.env[name]'),
  secretNames: {
    accepts: "an array of secret names to resolve on every open, e.g. ['STRIPE_KEY']",
    test: (v) => Array.isArray(v) && v.every((n) => typeof n === 'string' && n !== ''),
  },
  parkAfterMs: rules.number('a number of milliseconds >= 0, e.g. 5000', 0),
  retry: STEP_OPTIONS_RULE,
  modelOptions: rules.object('an object, passed to chat() as is'),
  debug: { accepts: 'true, false, or a chat() debug object', test: (v) => typeof v === 'boolean' || isObject(v) },
  agentLoopStrategy: rules.function('maxIterations(10)'),
}

/** Defines a harness. Use it with `createHost` (and, for waits, `createWorker`). */
export function defineHarness(options: HarnessOptions): Harness {
  checkOptions('defineHarness', options, HARNESS_OPTIONS)
  checkStepOptions('defineHarness', options.retry, 'option "retry"')
  const tools = options.tools ?? []
  const byName = new Map<string, AnyTool>()
  for (const tool of tools) {
    if (byName.has(tool.name))
      throw new HarnessError(
        'INVALID_ARGUMENT',
        `defineHarness: two tools are named ${JSON.stringify(tool.name)}; tool names must be unique.`,
      )
    byName.set(tool.name, tool)
  }
  const hooks = [options.replaceToolResult ?? [], options.onAfterToolCall ?? []].flat()
  const replayOfTool = (tool: AnyTool): ReplayPolicy => {
    // Nobody knows what a cut child agent did: never run it again blindly.
    if (isAgentTool(tool)) return 'never'
    const meta = durableMetaOf(tool)
    if (meta) return meta.replay
    return options.replay?.[tool.name] ?? 'never'
  }
  const replayOf = (toolName: string): ReplayPolicy => {
    const tool = byName.get(toolName)
    return tool ? replayOfTool(tool) : 'never'
  }
  return {
    [HARNESS]: true,
    name: options.name,
    options,
    tools,
    hooks,
    cutToolError: options.cutToolError ?? DEFAULT_CUT_TOOL_ERROR,
    toolNamed: (name) => byName.get(name),
    replayOf,
    replayOfTool,
    replayOfCall: (call) => (call.replay === 'safe' || call.replay === 'never' ? call.replay : replayOf(call.name)),
  } as Harness
}
