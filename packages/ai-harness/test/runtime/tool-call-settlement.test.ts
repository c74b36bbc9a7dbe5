import { toolDefinition } from '@tanstack/ai'
import { type AfterToolCallHook, defineHarness, durableTool } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { asSeenByModel, createWorld, drain, recordsOf } from '../support/harness.js'

/**
 * Every tool call the model makes is settled in the log with the result the model saw
 * (SPEC §4: "The logged result is the one the model saw"), so the next turn rebuilds
 * the same conversation and never runs a finished call again.
 */
async function twoTurns(call: { name: string; args: Record<string, unknown> }, onAfterToolCall?: AfterToolCallHook) {
  const runs = { count: 0 }
  const charge = durableTool(
    toolDefinition({ name: 'charge', description: 'Charge an order', inputSchema: z.object({ orderId: z.string() }) }),
    async ({ orderId }, { step }) => {
      runs.count++
      return step.do(`charge:${orderId}`, () => ({ id: 'ch_1' }))
    },
  )
  const adapter = scriptedText(({ messages, call: n }) => (n === 0 ? { toolCalls: [call] } : `Answer ${n} (${messages.length} messages).`))
  const world = createWorld()
  const harness = defineHarness({ name: 'settle', adapter, tools: [charge], ...(onAfterToolCall ? { onAfterToolCall } : {}) })
  const session = await world.start(harness, 'host-1').host.open({ sessionId: 'settle' })
  await drain(session.send('first'))
  const seenInTurnOne = (adapter.requests[1] ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content))
  await drain(session.send('second'))
  const entries = await session.entries()
  return { runs, adapter, entries, seenInTurnOne }
}

describe('every tool call of a turn is settled in the log with what the model saw', () => {
  it('a call whose arguments fail the input schema is logged with the tool error the model saw', async () => {
    const { entries, seenInTurnOne } = await twoTurns({ name: 'charge', args: { orderId: 42 } })
    expect(seenInTurnOne).toHaveLength(1)
    const results = recordsOf(entries, 'harness.tool.result')
    expect(results.map((r) => asSeenByModel(r.result))).toEqual(seenInTurnOne)
  })

  it('a call of a tool the harness does not have is logged with the tool error the model saw', async () => {
    const { entries, seenInTurnOne } = await twoTurns({ name: 'refund', args: {} })
    expect(seenInTurnOne).toHaveLength(1)
    const results = recordsOf(entries, 'harness.tool.result')
    expect(results.map((r) => asSeenByModel(r.result))).toEqual(seenInTurnOne)
  })

  it('a call whose onAfterToolCall hook throws is logged as the model saw it, and does not run again in the next turn', async () => {
    let hookCalls = 0
    const { runs, entries, seenInTurnOne, adapter } = await twoTurns({ name: 'charge', args: { orderId: 'o1' } }, () => {
      hookCalls++
      if (hookCalls === 1) throw new Error('The audit hook is down.')
    })
    expect(seenInTurnOne).toHaveLength(1)
    expect(runs.count).toBe(1)
    const turnOneEnd = entries.findIndex((e) => e.record.type === 'harness.turn.finished')
    const settledInTurnOne = recordsOf(entries.slice(0, turnOneEnd), 'harness.tool.result')
    expect(settledInTurnOne.map((r) => asSeenByModel(r.result))).toEqual(seenInTurnOne)
    const lastRequest = adapter.requests.at(-1) ?? []
    expect(lastRequest.at(-1)).toMatchObject({ role: 'user', content: 'second' })
  })
})
