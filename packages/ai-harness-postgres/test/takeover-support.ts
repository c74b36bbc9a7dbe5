/**
 * Shared by the takeover test and its processes: a harness whose one tool logs a step and
 * then starts one that never ends, so the process that drives it can only be killed there.
 */
import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type Harness } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { z } from 'zod'

export interface TakeoverTask {
  store: 'pg' | 'pglite'
  /** pg: the run's schema. */
  schema?: string
  /** PGlite: the data folder. */
  dataDir?: string
  /** The process slot's stable id: the host id of `drive`, the worker id of `resume`. */
  hostId: string
  role: 'drive' | 'resume'
  sessionId: string
}

/** `onStep(name)` is called when a step's function starts. */
export function takeoverHarness(onStep: (name: string) => void): Harness {
  const definition = toolDefinition({ name: 'work', description: 'Log a step, then one that never ends', inputSchema: z.object({}) })
  const work = durableTool(definition, async (_input, { step }) => {
    await step.do('first', async () => {
      onStep('first')
      // Long enough for a SIGTERM to land inside it: a graceful stop waits for it, then hands over.
      await new Promise((resolve) => setTimeout(resolve, 300))
      return { done: true }
    })
    await step.do('endless', async () => {
      onStep('endless')
      await new Promise(() => {})
    })
    return { ok: true }
  })
  const model = scriptedText(({ messages }) =>
    messages[messages.length - 1]?.role === 'user' ? { text: 'Working.', toolCalls: [{ name: 'work', args: {} }] } : 'Done.',
  )
  return defineHarness({ name: 'takeover', adapter: model, tools: [work] })
}
