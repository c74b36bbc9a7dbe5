// The symbols that mark a tool as made by `agentTool`, in a module that imports nothing,
// so the harness can ask "is this an agent tool?" without importing the agent tool's
// module, which itself imports the harness's type.

/** Where the harness finds an agent tool's child harness. */
export const AGENT = Symbol.for('@tanstack/ai-harness/agent-tool')

/** True for a tool made by `agentTool` (one that carries its child harness). */
export const isAgentTool = (tool: unknown): boolean =>
  typeof tool === 'object' && tool !== null && (tool as { [AGENT]?: unknown })[AGENT] !== undefined
