import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, codeOf, createWorld, drain, recordsOf } from '../support/harness.js'

describe('append in a harness session', () => {
  it('a record type that starts with harness. throws RECORD_TYPE_RESERVED, and nothing of that append is written', async () => {
    const world = createWorld()
    const codes: string[] = []
    const tool = durableTool(
      toolDefinition({ name: 'note', description: 'note', inputSchema: z.object({}) }),
      async (_args, { append }) => {
        codes.push(await codeOf(() => append([{ type: 'harness.step', toolCallId: 'x', name: 'forged' }])))
        codes.push(await codeOf(() => append([{ type: 'app.before', n: 1 }, { type: 'harness.tool.result' }])))
        append([{ type: 'app.kept', n: 2 }])
        return 'noted'
      },
    )
    const harness = defineHarness({ name: 'append', adapter: batchModel([{ name: 'note' }]), tools: [tool] })
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'append' })
    await drain(session.send('note it'))
    expect(codes).toEqual(['RECORD_TYPE_RESERVED', 'RECORD_TYPE_RESERVED'])
    const entries = await session.entries()
    expect(entries.map((e) => e.record.type).filter((t) => t.startsWith('app.'))).toEqual(['app.kept'])
    expect(recordsOf(entries, 'harness.step')).toEqual([])
    expect(recordsOf(entries, 'harness.tool.result')).toHaveLength(1)
  })
})
