import { toolDefinition } from '@tanstack/ai'
import { durableTool } from '@tanstack/ai-harness'
import { childSessionId } from '@tanstack/ai-harness/log'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createWorld, delegatingHarnesses, drain, recordsOf } from '../support/harness.js'

describe('an agent call whose child session was deleted while it waited for a person', () => {
  it('gets a tool error when the parent goes on, and the deleted child is not written again', async () => {
    const world = createWorld()
    const runs: string[] = []
    const confirm = durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) => {
      runs.push('confirm')
      const answer = await step.ask({ name: 'ok', message: 'Go ahead?', schema: z.object({ ok: z.boolean() }) })
      return answer.ok ? 'confirmed' : 'declined'
    })
    const { parent, child } = delegatingHarnesses(confirm)
    const { host } = world.start([parent, child], 'host')
    await drain((await host.open({ sessionId: 'boss', harness: 'boss' })).send('delegate'))
    const [assistant] = recordsOf(await world.read('boss'), 'harness.assistant')
    const calls = (assistant?.toolCalls ?? []) as Array<{ id: string }>
    const childId = childSessionId('boss', String(calls[0]?.id))
    expect(recordsOf(await world.read(childId), 'harness.ask')).toHaveLength(1)

    await memoryStore({ data: world.data, clock: world.clock }).delete(childId)
    const reopened = await world.start([parent, child], 'host-2').host.open({ sessionId: 'boss' })
    await drain(reopened.resume())
    expect(await world.read(childId)).toEqual([])
    expect(runs).toEqual(['confirm'])
    const entries = await world.read('boss')
    expect(recordsOf(entries, 'harness.tool.result')).toMatchObject([{ ok: false, result: { error: expect.stringContaining('deleted') } }])
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  })
})
