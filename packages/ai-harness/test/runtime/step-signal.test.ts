import { chat, toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, createWorld, drain } from '../support/harness.js'

describe("step.do's function gets the tool's abort signal", () => {
  it('in a session: the signal aborts when the session is cancelled while the step runs', async () => {
    const world = createWorld()
    const signals: AbortSignal[] = []
    let entered: () => void = () => {}
    const inside = new Promise<void>((resolve) => {
      entered = resolve
    })
    const tool = durableTool(toolDefinition({ name: 'wait', description: 'w', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('slow', ({ signal }) => {
        signals.push(signal)
        entered()
        // A step that honours the signal: it ends when the session stops it.
        return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
      })
      return 'done'
    })
    const session = await world
      .start(defineHarness({ name: 'h', adapter: batchModel([{ name: 'wait' }]), tools: [tool] }), 'host')
      .host.open({
        sessionId: 's',
      })
    const running = drain(session.send('go')).catch(() => [])
    await inside
    expect(signals[0]).toBeInstanceOf(AbortSignal)
    expect(signals[0]!.aborted).toBe(false)
    await session.cancel('stop it')
    await running
    expect(signals[0]!.aborted).toBe(true)
  })

  it('in plain chat(): fn gets an AbortSignal too', async () => {
    const signals: unknown[] = []
    const tool = durableTool(toolDefinition({ name: 'probe', description: 'p', inputSchema: z.object({}) }), async (_a, { step }) => {
      await step.do('look', ({ signal }) => {
        signals.push(signal)
      })
      return 'ok'
    })
    const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'probe', args: {} }] } : 'ok'))
    await drain(chat({ adapter, messages: [{ role: 'user', content: 'go' }], tools: [tool] }))
    expect(signals).toHaveLength(1)
    expect(signals[0]).toBeInstanceOf(AbortSignal)
  })
})
