import { toolDefinition } from '@tanstack/ai'
import {
  createHost,
  createWorker,
  defineHarness,
  durableTool,
  type Harness,
  type HarnessStore,
  type Host,
  type HostOptions,
  type WorkerOptions,
} from '@tanstack/ai-harness'
import type { LogEntry } from '@tanstack/ai-harness/store'
import { createManualClock, type FaultyStore, faultyStore, type ManualClock, scriptedText } from '@tanstack/ai-harness/testing'
import { createMemoryData, type MemoryData, type MemoryStoreOptions, memoryStore } from '@tanstack/ai-harness-memory'
import { z } from 'zod'
import { TEST_LEASE_MS } from './harness.js'

/** A host whose store (a memory store on shared data) injects faults per call. */
export interface FaultMachine {
  readonly store: FaultyStore
  readonly host: Host
}

/** Shared data and clock, and machines that each get their own faulty store on them. */
export interface FaultWorld {
  readonly data: MemoryData
  readonly clock: ManualClock
  /** A store on the world's data, without faults: what a healthy process sees. */
  readonly direct: HarnessStore
  machine(harness: Harness | Harness[], hostId: string, options?: Partial<HostOptions>): FaultMachine
  worker(harness: Harness | Harness[], workerId: string, options?: Partial<WorkerOptions>): ReturnType<typeof createWorker>
  read(logId: string): Promise<LogEntry[]>
  /** What the data keeps about a session: its log, lease and wakeup, if any. */
  traces(logId: string): { log: boolean; lease: boolean; wakeup: number | undefined }
}

export function faultWorld(options: { limits?: MemoryStoreOptions['limits'] } = {}): FaultWorld {
  const data = createMemoryData()
  const clock = createManualClock()
  const direct = memoryStore({ data, clock, limits: options.limits })
  return {
    data,
    clock,
    direct,
    machine(harness, hostId, hostOptions = {}) {
      const store = faultyStore(memoryStore({ data, clock, limits: options.limits }))
      const host = createHost({ store, harnesses: harness, clock, leaseMs: TEST_LEASE_MS, hostId, ...hostOptions })
      return { store, host }
    },
    worker(harness, workerId, workerOptions = {}) {
      return createWorker({
        store: memoryStore({ data, clock, limits: options.limits }),
        harnesses: harness,
        clock,
        leaseMs: TEST_LEASE_MS,
        workerId,
        ...workerOptions,
      })
    },
    read: (logId) => direct.read(logId),
    traces: (logId) => ({ log: data.logs.has(logId), lease: data.leases.has(logId), wakeup: data.wakeups.get(logId) }),
  }
}

/** A harness whose model answers every prompt with text: a turn is turn.started, assistant, turn.finished. */
export function chatHarness(name = 'chat'): Harness {
  return defineHarness({ name, adapter: scriptedText(() => 'Hello.') })
}

/** A harness whose one tool asks a person to approve, then answers with what they said. */
export function askHarness(name = 'asker'): Harness {
  return defineHarness({
    name,
    adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'Done.')),
    tools: [
      durableTool(toolDefinition({ name: 'confirm', description: 'Asks a person', inputSchema: z.object({}) }), async (_args, { step }) => {
        const answer = await step.ask({ name: 'ok', message: 'Proceed?', schema: z.object({ ok: z.boolean() }) })
        return answer.ok ? 'yes' : 'no'
      }),
    ],
  })
}

/**
 * A harness whose one tool runs `step.do('work', fn)` with the `fn` given, so a test
 * decides when (or whether) the step's function returns. Records each idempotency key.
 */
export function stepHarness(fn: (key: string) => unknown, name = 'stepper') {
  const keys: string[] = []
  const harness = defineHarness({
    name,
    adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'work', args: {} }] } : 'Worked.')),
    tools: [
      durableTool(toolDefinition({ name: 'work', description: 'Does work', inputSchema: z.object({}) }), async (_args, { step }) => {
        const value = await step.do('work', ({ idempotencyKey }) => {
          keys.push(idempotencyKey)
          return fn(idempotencyKey) as string
        })
        return value
      }),
    ],
  })
  return { harness, keys }
}

/** Resolves with what `promise` gave, or rejects when it takes longer than `ms` (real time): proves a call does not hang. */
export async function within<T>(ms: number, promise: Promise<T>, what = 'the call'): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

/** A promise and the functions that settle it. */
export function gate<T = void>() {
  let open: (value: T) => void = () => {}
  let fail: (error: unknown) => void = () => {}
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve
    fail = reject
  })
  return { promise, open, fail }
}
