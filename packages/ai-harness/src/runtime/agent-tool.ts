import { type ApprovalSchemaConfig, chat, type InferSchemaType, type SchemaInput, type ServerTool, type ToolDefinition } from '@tanstack/ai'
import { checkArgument, checkOptions, rules } from './check-options.js'
import { TOOL_DEFINITION } from './durable-tool.js'
import { type Harness, isHarness } from './harness.js'
import { AGENT } from './tool-marks.js'

export interface AgentMeta {
  readonly harness: Harness
  readonly prompt: (args: unknown) => string
}

export interface AgentToolOptions<TInput extends SchemaInput | undefined> {
  /** The child agent: its session runs inside the call, on the same store. */
  harness: Harness
  /** What the child is asked, from the call's arguments. */
  prompt: (args: InferSchemaType<TInput>) => string
}

export type AgentTool<TInput extends SchemaInput | undefined = any, TName extends string = string> = ServerTool<TInput, any, TName> & {
  readonly [AGENT]: AgentMeta
}

export function agentMetaOf(tool: unknown): AgentMeta | undefined {
  return typeof tool === 'object' && tool !== null ? (tool as { [AGENT]?: AgentMeta })[AGENT] : undefined
}

/**
 * A tool that runs another harness as a child session. The result is the child's
 * final answer. In a durable session the child's log is its own session
 * (`<parent>/agent/<toolCallId>`); a child that asks a person parks the parent call,
 * which keeps its place and goes on after the answer. After a crash, a cut agent-tool
 * call gets a tool error, as nobody knows what the child did, and the child's turn ends
 * so it never runs again; a call whose child waits for a person keeps its place, and one
 * whose child finished gets its answer. In plain `chat()` the child runs as a plain
 * `chat()` too.
 */
export function agentTool<
  TInput extends SchemaInput | undefined,
  TOutput extends SchemaInput | undefined,
  TName extends string,
  TNeedsApproval extends boolean,
  TApprovalSchema extends ApprovalSchemaConfig | undefined,
>(
  definition: ToolDefinition<TInput, TOutput, TName, TNeedsApproval, TApprovalSchema>,
  options: AgentToolOptions<TInput>,
): AgentTool<TInput, TName> {
  checkArgument('agentTool', 'tool definition', definition, TOOL_DEFINITION)
  checkOptions('agentTool', options, {
    harness: { accepts: 'a harness from defineHarness({ name, adapter, tools })', test: isHarness, required: true },
    prompt: rules.function("({ task }) => 'Please do: ' + task", true),
  })
  const meta: AgentMeta = { harness: options.harness, prompt: options.prompt as (args: unknown) => string }
  const plain = definition.server(async (args) => {
    const child = options.harness.options
    const text = await chat({
      adapter: child.adapter,
      messages: [{ role: 'user', content: options.prompt(args) }],
      tools: child.tools as never,
      systemPrompts: child.systemPrompts,
      stream: false,
    })
    return text as never
  })
  return Object.assign(plain, { [AGENT]: meta }) as never
}

/** The session id of the child session an agent-tool call runs. */
export const childSessionId = (parentId: string, toolCallId: string) => `${parentId}/agent/${toolCallId}`
