import { type AnyTool, chat, toolDefinition } from '@tanstack/ai'
import { durableTool } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { codeOf, drain } from '../support/harness.js'

/** Runs one plain `chat()` in which the model calls `tool` once, then answers. Returns what the model saw. */
async function runPlainChat(tool: AnyTool) {
  const adapter = scriptedText(({ messages }) =>
    messages[messages.length - 1]?.role === 'user' ? { toolCalls: [{ name: tool.name, args: {} }] } : 'Done.',
  )
  const chunks = await drain(chat({ adapter, messages: [{ role: 'user', content: 'go' }], tools: [tool] }))
  const toolMessage = adapter.requests.at(-1)?.find((m) => m.role === 'tool')
  return { chunks, toolContent: String(toolMessage?.content) }
}

const probe = (name: string) => toolDefinition({ name, description: name, inputSchema: z.object({}) })

describe('a durable tool in plain chat()', () => {
  it('step.do runs fn on every call of the tool, and fn gets an idempotency key', async () => {
    const keys: string[] = []
    const tool = durableTool(probe('charge'), async (_args, { step }) => {
      const charge = await step.do('charge:o1', ({ idempotencyKey }) => {
        keys.push(idempotencyKey)
        return { id: `ch_${keys.length}` }
      })
      return charge
    })
    const first = await runPlainChat(tool)
    const second = await runPlainChat(tool)
    expect(keys).toHaveLength(2)
    for (const key of keys) expect(key).toMatch(/\S/)
    expect(JSON.parse(first.toolContent)).toEqual({ id: 'ch_1' })
    expect(JSON.parse(second.toolContent)).toEqual({ id: 'ch_2' })
  })

  it('step.do returns the JSON copy of the value, not the value itself', async () => {
    const original = { list: [1, null], gone: undefined, nested: { s: 'x' } }
    let returned: unknown
    const tool = durableTool(probe('copy'), async (_args, { step }) => {
      returned = await step.do('value', () => original)
      return 'ok'
    })
    await runPlainChat(tool)
    expect(returned).not.toBe(original)
    expect(returned).toStrictEqual({ list: [1, null], nested: { s: 'x' } })
    expect((returned as { nested: unknown }).nested).not.toBe(original.nested)
  })

  it('step.do of a function that returns nothing resolves to undefined', async () => {
    let returned: unknown = 'not called'
    const tool = durableTool(probe('nothing'), async (_args, { step }) => {
      returned = await step.do('send', () => {})
      return 'ok'
    })
    await runPlainChat(tool)
    expect(returned).toBeUndefined()
  })

  it('step.sleep waits its full time', async () => {
    const duration = 30
    let elapsed = -1
    const tool = durableTool(probe('wait'), async (_args, { step }) => {
      const start = Date.now()
      await step.sleep('cool-down', duration)
      elapsed = Date.now() - start
      return 'ok'
    })
    await runPlainChat(tool)
    // Node's timers may fire up to 1 ms early against Date.now(); returning at once would be ~0 ms.
    expect(elapsed).toBeGreaterThanOrEqual(duration - 1)
  })

  it('step.ask throws NOT_IN_DURABLE_SESSION', async () => {
    const tool = durableTool(probe('ask'), async (_args, { step }) => ({
      code: await codeOf(() => step.ask({ name: 'size', message: 'Which size?', schema: z.object({ size: z.string() }) })),
    }))
    const { toolContent } = await runPlainChat(tool)
    expect(JSON.parse(toolContent)).toEqual({ code: 'NOT_IN_DURABLE_SESSION' })
  })

  it('append throws NOT_IN_DURABLE_SESSION', async () => {
    const tool = durableTool(probe('append'), async (_args, { append }) => ({
      code: await codeOf(() => append([{ type: 'app.memory', fact: 'likes tea' }])),
    }))
    const { toolContent } = await runPlainChat(tool)
    expect(JSON.parse(toolContent)).toEqual({ code: 'NOT_IN_DURABLE_SESSION' })
  })

  it('the same step name twice in one tool call throws STEP_DUPLICATE_NAME, and the second fn does not run', async () => {
    const ran: string[] = []
    const tool = durableTool(probe('twice'), async (_args, { step }) => {
      await step.do('charge', () => {
        ran.push('first')
      })
      const code = await codeOf(() =>
        step.do('charge', () => {
          ran.push('second')
        }),
      )
      return { code }
    })
    const { toolContent } = await runPlainChat(tool)
    expect(JSON.parse(toolContent)).toEqual({ code: 'STEP_DUPLICATE_NAME' })
    expect(ran).toEqual(['first'])
  })

  it('the same name in a later call of the tool is fine: names are unique per call', async () => {
    const tool = durableTool(probe('again'), async (_args, { step }) => step.do('charge', () => ({ ok: true })))
    expect(JSON.parse((await runPlainChat(tool)).toolContent)).toEqual({ ok: true })
    expect(JSON.parse((await runPlainChat(tool)).toolContent)).toEqual({ ok: true })
  })

  it('a Date step value is refused with STEP_NOT_JSON', async () => {
    const tool = durableTool(probe('date'), async (_args, { step }) => ({
      code: await codeOf(() => step.do('when', (): unknown => new Date(0))),
      path: await step.do('nested', (): unknown => ({ at: new Date(0) })).catch((error: { path?: string }) => error.path),
    }))
    const { toolContent } = await runPlainChat(tool)
    expect(JSON.parse(toolContent)).toEqual({ code: 'STEP_NOT_JSON', path: '$.at' })
  })
})
