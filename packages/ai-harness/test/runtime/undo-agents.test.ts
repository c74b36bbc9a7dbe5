import { type AnyTool, toolDefinition } from '@tanstack/ai'
import { durableTool } from '@tanstack/ai-harness'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createWorld, delegatingHarnesses, drain, recordsOf, runUntilCrash, type World } from '../support/harness.js'

/** The child session of the parent's (first) agent call. */
async function childOf(world: World, parentId: string): Promise<string> {
  const calls = recordsOf(await world.read(parentId), 'harness.assistant')[0]?.toolCalls as Array<{ id: string }>
  return `${parentId}/agent/${calls[0]?.id}`
}

const lastTurn = (records: readonly LogRecord[]) =>
  records.findLast((r) => r.type.startsWith('harness.turn.') && r.type !== 'harness.turn.resumed')?.type

describe('undo inside a child agent', () => {
  it("a final failure of the child's call rolls it back: the child's model reads what was undone, the parent gets the child's answer", async () => {
    const log: string[] = []
    const confirm: AnyTool = durableTool(
      toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }),
      async (_a, { step }) => {
        await step.do('charge', { undo: () => void log.push('refund') }, () => void log.push('charge'))
        await step.do('invoice', () => {
          throw new Error('The invoice service is down')
        })
      },
    )
    const world = createWorld()
    const { parent, child } = delegatingHarnesses(confirm)
    const session = await world.start([parent, child], 'h').host.open({ sessionId: 'boss', harness: 'boss' })
    await drain(session.send('go'))
    expect(log).toEqual(['charge', 'refund'])
    const childLog = await world.read(await childOf(world, 'boss'))
    expect(recordsOf(childLog, 'harness.tool.result')).toMatchObject([
      { ok: false, result: { error: 'The invoice service is down. The call was rolled back: "charge" undone.' } },
    ])
    expect(lastTurn(childLog.map((e) => e.record))).toBe('harness.turn.finished')
    const parentLog = await world.read('boss')
    expect(recordsOf(parentLog, 'harness.tool.result')).toMatchObject([{ ok: true }])
    expect(recordsOf(parentLog, 'harness.rollback')).toEqual([])
  })

  it("a cancel of the parent while the child waits for a person (verify said 'unknown') undoes the finished steps once, runs the unknown one neither again nor its undo, and ends both turns cancelled", async () => {
    const log: string[] = []
    const confirm: AnyTool = durableTool(
      toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }),
      async (_a, { step }) => {
        await step.do('charge', { undo: () => void log.push('refund') }, () => void log.push('charge'))
        await step.do('mail', { verify: () => 'unknown' as const, undo: () => void log.push('unmail') }, () => void log.push('mail'))
        return 'sent'
      },
    )
    const world = createWorld()
    const { parent, child } = delegatingHarnesses(confirm)
    const harnesses = [parent, child]
    // Host 1 dies once the child's mail intent is logged: nobody knows whether the mail went out.
    const first = world.start(harnesses, 'host-1')
    first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step.intent' && r.name === 'mail'), 'after')
    await runUntilCrash(first, (await first.host.open({ sessionId: 'boss', harness: 'boss' })).send('go'))
    world.expireLeases()
    const second = world.start(harnesses, 'host-2')
    const childId = await childOf(world, 'boss')
    // The child's run after the crash asks verify, which says 'unknown': it asks a person and waits.
    const childSession = await second.host.open({ sessionId: childId, harness: 'helper' })
    await drain(childSession.resume())
    await childSession.close()
    expect(recordsOf(await world.read(childId), 'harness.ask')).toHaveLength(1)
    const boss = await second.host.open({ sessionId: 'boss', harness: 'boss' })
    await drain(boss.resume())
    expect(boss.status).toBe('parked')
    await boss.cancel('the customer changed their mind')
    expect(log.filter((l) => l === 'mail').length).toBeLessThanOrEqual(1)
    expect(log.filter((l) => l !== 'mail')).toEqual(['charge', 'refund'])
    const childLog = await world.read(childId)
    expect(recordsOf(childLog, 'harness.tool.result')).toMatchObject([
      { ok: false, result: { error: expect.stringMatching(/The call was rolled back: "charge" undone\.$/) } },
    ])
    expect(lastTurn(childLog.map((e) => e.record))).toBe('harness.turn.cancelled')
    const parentLog = await world.read('boss')
    expect(lastTurn(parentLog.map((e) => e.record))).toBe('harness.turn.cancelled')
    expect(recordsOf(parentLog, 'harness.rollback')).toMatchObject([{ cancel: { reason: 'the customer changed their mind' } }])
    expect(recordsOf(parentLog, 'harness.assistant')).toHaveLength(1)
  })
})
