import { toolDefinition } from '@tanstack/ai'
import { type AfterToolCallHook, defineHarness, durableTool } from '@tanstack/ai-harness'
import type { ToolCallOutcome } from '@tanstack/ai-harness/log'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  asSeenByModel,
  batchModel,
  createWorld,
  drain,
  isResultOf,
  lastToolMessages,
  recordsOf,
  runUntilCrash,
} from '../support/harness.js'

const quote = durableTool(toolDefinition({ name: 'quote', description: 'Price a cart', inputSchema: z.object({}) }), async () => ({
  cents: 1200,
}))
const broken = toolDefinition({ name: 'broken', description: 'Always fails', inputSchema: z.object({}) }).server(async () => {
  throw new Error('The pricing service is down.')
})

async function runOnce(hooks: AfterToolCallHook[], tool = quote) {
  const world = createWorld()
  const adapter = batchModel([{ name: tool.name }])
  const harness = defineHarness({ name: 'hooks', adapter, tools: [tool], onAfterToolCall: hooks })
  const machine = world.start(harness, 'host-1')
  const session = await machine.host.open({ sessionId: 'hooks' })
  await drain(session.send('price my cart'))
  const [result] = recordsOf(await session.entries(), 'harness.tool.result')
  return { result: result!, seen: lastToolMessages(adapter) }
}

describe('onAfterToolCall hooks of defineHarness', () => {
  it('without a hook, the logged result is what the model saw in its next request', async () => {
    const { result, seen } = await runOnce([])
    expect(result).toMatchObject({ ok: true, result: { cents: 1200 } })
    expect(seen.map((m) => m.content)).toEqual([asSeenByModel(result.result)])
  })

  it('a failed call is logged as the tool error that the model saw', async () => {
    const { result, seen } = await runOnce([], broken as never)
    expect(result.ok).toBe(false)
    expect(seen.map((m) => m.content)).toEqual([asSeenByModel(result.result)])
  })

  it('a hook that returns { result } replaces the result: the model sees the replacement and the log keeps it', async () => {
    const { result, seen } = await runOnce([(outcome) => ({ result: { ...(outcome.result as object), currency: 'EUR' } })])
    expect(result).toMatchObject({ ok: true, result: { cents: 1200, currency: 'EUR' } })
    expect(seen.map((m) => m.content)).toEqual([asSeenByModel({ cents: 1200, currency: 'EUR' })])
  })

  it('a replacement wins on an error too: the call is logged ok with the replacement, as the model saw it', async () => {
    const outcomes: ToolCallOutcome[] = []
    const { result, seen } = await runOnce(
      [
        (outcome) => {
          outcomes.push(outcome)
          return { result: 'Prices are unavailable; try again later.' }
        },
      ],
      broken as never,
    )
    expect(outcomes).toMatchObject([{ toolName: 'broken', ok: false }])
    expect(outcomes[0]!.error).toBeInstanceOf(Error)
    expect(result).toMatchObject({ ok: true, result: 'Prices are unavailable; try again later.' })
    expect(seen.map((m) => m.content)).toEqual(['Prices are unavailable; try again later.'])
  })

  it('hooks run in order, each seeing the result the one before left; a hook that returns nothing keeps it', async () => {
    const saw: unknown[] = []
    const { result, seen } = await runOnce([
      (outcome) => ({ result: { step: 1, was: outcome.result } }),
      (outcome) => {
        saw.push(outcome.result)
      },
      (outcome) => ({ result: { step: 2, was: outcome.result } }),
    ])
    expect(saw).toEqual([{ step: 1, was: { cents: 1200 } }])
    expect(result.result).toEqual({ step: 2, was: { step: 1, was: { cents: 1200 } } })
    expect(seen.map((m) => m.content)).toEqual([asSeenByModel(result.result)])
  })

  it('after a crash that cuts the batch, its finished call keeps the replaced result and does not run again', async () => {
    const world = createWorld()
    let quoteRuns = 0
    const counted = durableTool(toolDefinition({ name: 'quote', description: 'Price a cart', inputSchema: z.object({}) }), async () => {
      quoteRuns++
      return { cents: 1200 }
    })
    const slow = durableTool(toolDefinition({ name: 'slow', description: 'Slow', inputSchema: z.object({}) }), async () => 'slow done')
    const adapter = batchModel([{ name: 'quote' }, { name: 'slow' }])
    const harness = defineHarness({
      name: 'hooks',
      adapter,
      tools: [counted, slow],
      onAfterToolCall: (outcome) => (outcome.toolName === 'quote' ? { result: { cents: 999, note: 'discounted' } } : undefined),
    })
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend(isResultOf('slow'), 'before')
    const session = await first.host.open({ sessionId: 'hooks' })
    await runUntilCrash(first, session.send('price my cart'))

    world.expireLeases()
    const reopened = await world.start(harness, 'host-2').host.open({ sessionId: 'hooks' })
    await drain(reopened.resume())
    expect(quoteRuns).toBe(1)
    const results = recordsOf(await reopened.entries(), 'harness.tool.result')
    const quoteResult = results.find((r) => r.toolName === 'quote')!
    expect(quoteResult.result).toEqual({ cents: 999, note: 'discounted' })
    const seenNow = lastToolMessages(adapter).find((m) => m.toolCallId === quoteResult.toolCallId)
    expect(seenNow?.content).toBe(asSeenByModel({ cents: 999, note: 'discounted' }))
  })

  it('after a crash, the model is shown again exactly the result it saw before the crash', async () => {
    const world = createWorld()
    let quoteRuns = 0
    const counted = durableTool(toolDefinition({ name: 'quote', description: 'Price a cart', inputSchema: z.object({}) }), async () => {
      quoteRuns++
      return { cents: 1200 }
    })
    const adapter = batchModel([{ name: 'quote' }])
    const harness = defineHarness({ name: 'hooks', adapter, tools: [counted], onAfterToolCall: () => ({ result: { cents: 999 } }) })
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.turn.finished'), 'before')
    const session = await first.host.open({ sessionId: 'hooks' })
    await runUntilCrash(first, session.send('price my cart'))
    const seenBeforeCrash = lastToolMessages(adapter)
    expect(seenBeforeCrash.map((m) => m.content)).toEqual([asSeenByModel({ cents: 999 })])

    world.expireLeases()
    const reopened = await world.start(harness, 'host-2').host.open({ sessionId: 'hooks' })
    await drain(reopened.resume())
    expect(quoteRuns).toBe(1)
    expect(adapter.requests).toHaveLength(3)
    expect(lastToolMessages(adapter)).toEqual(seenBeforeCrash)
    expect(recordsOf(await reopened.entries(), 'harness.turn.finished')).toHaveLength(1)
  })
})

describe('replaceToolResult, the name of the result-replacing hook apart from TanStack AI middleware', () => {
  it('replaces the result as onAfterToolCall did; hooks given under the old, deprecated name run after it', async () => {
    const world = createWorld()
    const order: string[] = []
    const harness = defineHarness({
      name: 'hooks',
      adapter: batchModel([{ name: 'quote' }]),
      tools: [quote],
      replaceToolResult: (outcome) => {
        order.push('replaceToolResult')
        return { result: { ...(outcome.result as object), currency: 'EUR' } }
      },
      onAfterToolCall: (outcome) => {
        order.push(`onAfterToolCall saw ${JSON.stringify(outcome.result)}`)
      },
    })
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'renamed' })
    await drain(session.send('price my cart'))
    const [result] = recordsOf(await session.entries(), 'harness.tool.result')
    expect(result).toMatchObject({ ok: true, result: { cents: 1200, currency: 'EUR' } })
    expect(order).toEqual(['replaceToolResult', 'onAfterToolCall saw {"cents":1200,"currency":"EUR"}'])
  })

  it('refuses a replaceToolResult that is not a function or an array of them', async () => {
    expect(() => defineHarness({ name: 'h', adapter: batchModel([]), replaceToolResult: 'nope' as never })).toThrow(/replaceToolResult/)
  })
})
