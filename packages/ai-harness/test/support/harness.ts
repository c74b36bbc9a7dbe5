import type { StreamChunk } from '@tanstack/ai'
import { createHost, type Harness, type Host, type LogEntry, type LogRecord } from '@tanstack/ai-harness'
import {
  type CrashableStore,
  crashable,
  createManualClock,
  drain,
  type ManualClock,
  runUntilCrash as runStreamUntilCrash,
  type ScriptedTextAdapter,
  scriptedText,
} from '@tanstack/ai-harness/testing'
import { createMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'

export const LEASE_MS = 30_000
export { drain }

/** Reads a stream to its end. */

/** The `code` of what `run` throws or rejects with, or 'none' when it succeeds. */
export async function codeOf(run: () => unknown): Promise<string> {
  try {
    await run()
  } catch (error) {
    return String((error as { code?: unknown }).code)
  }
  return 'none'
}

export function recordsOf(entries: readonly LogEntry[], type: string): LogRecord[] {
  return entries.map((e) => e.record).filter((r) => r.type === type)
}

export function entriesOf(entries: readonly LogEntry[], type: string): LogEntry[] {
  return entries.filter((e) => e.record.type === type)
}

/** The tool message text the model reads for a logged result (strings as they are, the rest as JSON). */
export function asSeenByModel(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result)
}

/** One machine: a memory store on shared data (it can crash like a killed process) and a host. */
export interface Machine {
  readonly store: CrashableStore
  readonly host: Host
}

/** The data a store keeps across "process" restarts, and the clock every machine shares. */
export interface World {
  readonly data: MemoryData
  readonly clock: ManualClock
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
    start(harness, hostId) {
      const store = crashable(memoryStore({ data, clock }))
      const host = createHost({ store, harnesses: harness, clock, leaseMs: LEASE_MS, hostId })
      return { store, host }
    },
    read: (logId) => memoryStore({ data, clock }).read(logId),
    expireLeases() {
      clock.advance(LEASE_MS + 1)
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
