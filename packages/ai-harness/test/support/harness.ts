import { type AnyTool, type StreamChunk, toolDefinition } from '@tanstack/ai'
import { agentTool, defineHarness, type Harness } from '@tanstack/ai-harness'
import type { LogEntry, LogRecord } from '@tanstack/ai-harness/store'
import {
  createManualClock,
  type Machine,
  type ManualClock,
  runUntilCrash as runStreamUntilCrash,
  type ScriptedTextAdapter,
  scriptedText,
  startMachine,
  TEST_LEASE_MS,
} from '@tanstack/ai-harness/testing'
import { createMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { z } from 'zod'

// The machines, their lease time and the log filters are the testing entry's, shared with
// the conformance suite; these helpers add the core tests' world of memory stores.
export { drain, entriesOf, type Machine, recordsOf, TEST_LEASE_MS } from '@tanstack/ai-harness/testing'

/** The `code` of what `run` throws or rejects with, or 'none' when it succeeds. */
export async function codeOf(run: () => unknown): Promise<string> {
  try {
    await run()
  } catch (error) {
    return String((error as { code?: unknown }).code)
  }
  return 'none'
}

/** The tool message text the model reads for a logged result (strings as they are, the rest as JSON). */
export function asSeenByModel(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result)
}

/** The data a store keeps across "process" restarts, and the clock every machine shares. */
export interface World {
  readonly data: MemoryData
  readonly clock: ManualClock
  /** A machine on a memory store over the world's data. */
  start(harness: Harness | Harness[], hostId: string): Machine
  /** Reads a log straight from the data, as a process that did not crash would. */
  read(logId: string): Promise<LogEntry[]>
  /** Lets the lease of a crashed host run out, so another host may take the session. */
  expireLeases(): void
}

export function createWorld(): World {
  const data = createMemoryData()
  const clock = createManualClock()
  return {
    data,
    clock,
    start: (harness, hostId) => startMachine(memoryStore({ data, clock }), { harnesses: harness, clock, hostId }),
    read: (logId) => memoryStore({ data, clock }).read(logId),
    expireLeases() {
      clock.advance(TEST_LEASE_MS + 1)
    },
  }
}

/** Runs a stream until its machine crashes (see runUntilCrash in @tanstack/ai-harness/testing). */
export const runUntilCrash = (machine: Machine, stream: AsyncIterable<StreamChunk>) =>
  runStreamUntilCrash(machine.store, stream, { timeoutMs: 20_000 })

export const isStepNamed =
  (name: string) =>
  (records: readonly LogRecord[]): boolean =>
    records.some((r) => r.type === 'harness.step' && r.name === name)

export const isStepStarting =
  (prefix: string) =>
  (records: readonly LogRecord[]): boolean =>
    records.some((r) => r.type === 'harness.step' && String(r.name).startsWith(prefix))

export const isResultOf =
  (toolName: string) =>
  (records: readonly LogRecord[]): boolean =>
    records.some((r) => r.type === 'harness.tool.result' && r.toolName === toolName)

/** A scripted model that answers a prompt with one batch of tool calls, then with `answer`. */
export function batchModel(calls: Array<{ name: string; args?: Record<string, unknown> }>, answer = 'Done.') {
  return scriptedText(({ messages }) =>
    messages[messages.length - 1]?.role === 'user' ? { toolCalls: calls.map((c) => ({ name: c.name, args: c.args ?? {} })) } : answer,
  )
}

/** The tool messages of the model's last request. */
export function lastToolMessages(adapter: ScriptedTextAdapter): Array<{ toolCallId: string; content: string }> {
  return (adapter.requests.at(-1) ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => ({ toolCallId: String(m.toolCallId), content: String(m.content) }))
}

/**
 * A parent harness `boss` whose agent tool `delegate` runs a child harness `helper`; the
 * child's model calls `confirm` (the tool given) once, then answers.
 */
export function delegatingHarnesses(confirm: AnyTool): { parent: Harness; child: Harness } {
  const child = defineHarness({
    name: 'helper',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'Helped.',
    ),
    tools: [confirm],
  })
  const delegate = agentTool(toolDefinition({ name: 'delegate', description: 'd', inputSchema: z.object({}) }), {
    harness: child,
    prompt: () => 'Please confirm.',
  })
  const parent = defineHarness({
    name: 'boss',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'delegate', args: {} }] } : 'Moving on.',
    ),
    tools: [delegate],
  })
  return { parent, child }
}
