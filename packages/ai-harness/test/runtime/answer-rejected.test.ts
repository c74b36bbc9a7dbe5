import { type StreamChunk, toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool, HARNESS_EVENTS, type HarnessStore } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { codeOf, createWorld, drain, TEST_LEASE_MS, recordsOf } from '../support/harness.js'

type Question = { sessionId: string; questionId: string; message: string; rejected?: string }

const questionsIn = (chunks: readonly StreamChunk[]) =>
  chunks
    .filter((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === HARNESS_EVENTS.question)
    .map((c) => (c as unknown as { value: Question }).value)

/** A tool whose question's schema has a check JSON Schema cannot carry: at most 10 items. */
function orderHarness(seen: unknown[]) {
  const order = durableTool(
    toolDefinition({ name: 'order', description: 'Orders items', inputSchema: z.object({}) }),
    async (_a, { step }) => {
      const answer = await step.ask({
        name: 'quantity',
        message: 'How many?',
        schema: z.object({ quantity: z.number() }).refine((v) => v.quantity <= 10, { message: 'at most 10 items' }),
      })
      seen.push(answer)
      return `ordered ${answer.quantity}`
    },
  )
  const adapter = scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'order', args: {} }] } : 'Done.',
  )
  return defineHarness({ name: 'orders', adapter, tools: [order] })
}

describe("an answer that passes the logged JSON Schema but fails the tool's own schema", () => {
  it('opens the question again: the refusal is logged, the session parks with the question again, and a corrected answer from another host completes the call', async () => {
    const world = createWorld()
    const seen: unknown[] = []
    const harness = orderHarness(seen)
    const { host } = world.start(harness, 'host-1')
    const [question] = questionsIn(await drain((await host.open({ sessionId: 'order' })).send('order please')))
    expect(question).toBeDefined()
    // The logged JSON Schema has no refine: the host takes 50.
    await host.answer({ sessionId: 'order', questionId: question!.questionId, answer: { quantity: 50 } })

    const chunks: StreamChunk[] = []
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: harness,
      clock: world.clock,
      leaseMs: TEST_LEASE_MS,
      onChunk: (_id, chunk) => chunks.push(chunk),
    })
    expect((await worker.poll()).resumed).toEqual(['order'])
    expect(seen).toEqual([])
    const [again] = questionsIn(chunks)
    expect(again).toMatchObject({ sessionId: 'order', questionId: question!.questionId, message: 'How many?' })
    expect(again?.rejected).toContain('at most 10 items')
    let entries = await world.read('order')
    expect(recordsOf(entries, 'harness.answer.rejected')).toMatchObject([
      { name: 'quantity', reason: expect.stringContaining('at most 10') },
    ])
    expect(recordsOf(entries, 'harness.tool.result')).toEqual([])
    expect(recordsOf(entries, 'harness.parked')).toHaveLength(2)
    expect((await world.start(harness, 'viewer').host.open({ sessionId: 'order' })).parked?.reason).toBe('ask')

    // Any host takes the corrected answer; a second answer after it is refused.
    const other = world.start(harness, 'host-2').host
    await other.answer({ sessionId: 'order', questionId: question!.questionId, answer: { quantity: 5 } })
    expect(await codeOf(() => other.answer({ sessionId: 'order', questionId: question!.questionId, answer: { quantity: 6 } }))).toBe(
      'ALREADY_ANSWERED',
    )
    world.expireLeases()
    expect((await worker.poll()).resumed).toEqual(['order'])
    expect(seen).toEqual([{ quantity: 5 }])
    entries = await world.read('order')
    expect(recordsOf(entries, 'harness.tool.result').map((r) => r.result)).toEqual(['ordered 5'])
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.ask')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.answer').map((r) => r.answer)).toEqual([{ quantity: 50 }, { quantity: 5 }])
    await worker.stop()
  })
})

describe('a session deleted while its question is being asked', () => {
  it("reads 'deleted', not 'cut', and nothing more is written to it", async () => {
    const world = createWorld()
    const seen: unknown[] = []
    const inner = memoryStore({ data: world.data, clock: world.clock })
    // Someone deletes the session the moment its question is logged, before the host parks it.
    const deleting: HarnessStore = {
      ...inner,
      async append(logId, expectedSeq, records, options) {
        const result = await inner.append(logId, expectedSeq, records, options)
        if (records.some((r) => r.type === 'harness.ask')) await inner.delete(logId)
        return result
      },
    }
    const host = createHost({ store: deleting, harnesses: orderHarness(seen), clock: world.clock, leaseMs: TEST_LEASE_MS })
    const session = await host.open({ sessionId: 'gone' })
    expect(await codeOf(() => drain(session.send('order please')))).toBe('LOG_CONFLICT')
    expect(session.status).toBe('deleted')
    expect(await world.read('gone')).toEqual([])
  })
})
