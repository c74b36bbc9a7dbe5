import { chat, toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type DurableToolContext } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, codeOf, createWorld, drain } from '../support/harness.js'

/** A tool that returns at once and keeps its context, so a test can call steps after the call ended. */
function leakyTool() {
  const kept: { context?: DurableToolContext } = {}
  const tool = durableTool(toolDefinition({ name: 'leaky', description: 'l', inputSchema: z.object({}) }), async (_a, context) => {
    kept.context = context
    return 'returned'
  })
  return { tool, kept }
}

/** Every step call, made after the call ended: the code each throws, and whether any function ran. */
async function callEverything(context: DurableToolContext) {
  const ran: string[] = []
  const codes = {
    do: await codeOf(() => context.step.do('late', () => ran.push('fn'))),
    sleep: await codeOf(() => context.step.sleep('late-nap', 10)),
    ask: await codeOf(() => context.step.ask({ name: 'late-question', message: 'Still there?', schema: z.object({ ok: z.boolean() }) })),
    append: await codeOf(() => context.append([{ type: 'app.late' }])),
  }
  return { codes, ran }
}

const settled = { do: 'TOOL_CALL_SETTLED', sleep: 'TOOL_CALL_SETTLED', ask: 'TOOL_CALL_SETTLED', append: 'TOOL_CALL_SETTLED' }

describe('a tool call has a life: step calls after its execute ended are refused', () => {
  it('in a session: each throws TOOL_CALL_SETTLED, runs nothing and writes nothing, also after close()', async () => {
    const world = createWorld()
    const { tool, kept } = leakyTool()
    const session = await world
      .start(defineHarness({ name: 'h', adapter: batchModel([{ name: 'leaky' }]), tools: [tool] }), 'host')
      .host.open({
        sessionId: 's',
      })
    await drain(session.send('go'))
    const before = await world.read('s')
    expect(await callEverything(kept.context!)).toEqual({ codes: settled, ran: [] })
    await session.close()
    expect(await callEverything(kept.context!)).toEqual({ codes: settled, ran: [] })
    expect(await world.read('s')).toEqual(before)
  })

  it('a step whose function finishes after execute returned writes nothing and rejects with TOOL_CALL_SETTLED', async () => {
    const world = createWorld()
    let finish: () => void = () => {}
    let dangling: Promise<unknown> | undefined
    const tool = durableTool(toolDefinition({ name: 'hasty', description: 'h', inputSchema: z.object({}) }), async (_a, { step }) => {
      dangling = step.do(
        'slow',
        () =>
          new Promise<{ done: true }>((resolve) => {
            finish = () => resolve({ done: true })
          }),
      )
      dangling.catch(() => {})
      await new Promise((resolve) => setTimeout(resolve, 5))
      return 'returned early'
    })
    const session = await world
      .start(defineHarness({ name: 'h', adapter: batchModel([{ name: 'hasty' }]), tools: [tool] }), 'host')
      .host.open({
        sessionId: 's',
      })
    await drain(session.send('go'))
    const before = await world.read('s')
    finish()
    expect(await codeOf(() => dangling)).toBe('TOOL_CALL_SETTLED')
    expect(await world.read('s')).toEqual(before)
    expect(before.filter((e) => e.record.type === 'harness.step')).toEqual([])
  })

  it('in plain chat(): the same refusals', async () => {
    const { tool, kept } = leakyTool()
    const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'leaky', args: {} }] } : 'ok'))
    await drain(chat({ adapter, messages: [{ role: 'user', content: 'go' }], tools: [tool] }))
    expect(await callEverything(kept.context!)).toEqual({ codes: settled, ran: [] })
  })
})
