import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type Harness } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import type { RequestCount, RequestCounter } from '../targets/requests.js'
import { APP_RECORDS, SMALL_VALUE } from './values.js'

/** One `step.do`, seen from inside the tool. */
export interface StepSample {
  /** When it started and ended, `performance.now()`. */
  start: number
  end: number
  /** Client requests sent while it ran (valid when one session runs at a time). */
  requests: RequestCount & { total: number }
  /** Store calls made while it ran: appends and reads. */
  storeCalls: StoreCalls
}

export interface StoreCalls {
  append: number
  read: number
}

export interface StepHarnessOptions {
  /** Tool calls the scripted model makes, one after another, in one turn. */
  calls: number
  /** `step.do` calls per tool call. */
  steps: number
  /** Whether the tool appends `APP_RECORDS` with its result. */
  appendRecords: boolean
  requests: RequestCounter
  /** The store's call counts so far (see `instrumentedStore`). */
  storeCalls: () => StoreCalls
  onStep(sample: StepSample): void
  /** Awaited in the tool before its first step: lets concurrent sessions start their steps together. */
  beforeSteps?: () => Promise<void>
}

/**
 * A harness whose one durable tool runs `steps` steps with the small value and times
 * each `step.do` from inside the tool: that is the step itself, with no model or
 * turn bookkeeping around it. The scripted model calls the tool `calls` times, then
 * answers.
 */
export function stepHarness(options: StepHarnessOptions): Harness {
  const work = durableTool(
    toolDefinition({ name: 'work', description: 'Runs durable steps', inputSchema: z.object({}) }),
    async (_args, { step, append }) => {
      await options.beforeSteps?.()
      for (let i = 0; i < options.steps; i++) {
        const before = options.requests.snapshot()
        const calls = options.storeCalls()
        const start = performance.now()
        await step.do(`step:${i}`, () => SMALL_VALUE)
        const end = performance.now()
        const after = options.storeCalls()
        options.onStep({
          start,
          end,
          requests: options.requests.since(before),
          storeCalls: { append: after.append - calls.append, read: after.read - calls.read },
        })
      }
      if (options.appendRecords) append(APP_RECORDS)
      return { ok: true }
    },
  )
  return defineHarness({
    name: 'bench',
    adapter: scriptedText(({ messages }) => {
      const results = messages.filter((m) => m.role === 'tool').length
      return results < options.calls ? { toolCalls: [{ name: 'work', args: {} }] } : 'done'
    }),
    tools: [work],
  })
}
