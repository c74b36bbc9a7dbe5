import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool } from '@tanstack/ai-harness'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, drain, recordsOf } from '../support/harness.js'

const probe = (name: string) => toolDefinition({ name, description: name, inputSchema: z.object({}) })

describe('a tool result over the store limits', () => {
  it('becomes a tool error the model sees and the log keeps, and the turn goes on', async () => {
    const tool = durableTool(probe('dump'), async (_args, { append }) => {
      append([{ type: 'app.note', note: 'kept only with a result that fits' }])
      return { rows: 'x'.repeat(5_000) }
    })
    const adapter = batchModel([{ name: 'dump' }], 'Handled.')
    const harness = defineHarness({ name: 'big', adapter, tools: [tool] })
    const store = memoryStore({ limits: { maxRecordBytes: 2_000, maxBatchBytes: 4_000 } })
    const session = await createHost({ store, harnesses: harness }).open({ sessionId: 'big' })
    await drain(session.send('go'))
    const entries = await session.entries()
    const [result] = recordsOf(entries, 'harness.tool.result')
    expect(result?.ok).toBe(false)
    expect(String((result?.result as { error?: string }).error)).toContain('too large')
    expect(recordsOf(entries, 'app.note')).toEqual([])
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    const lastRequest = adapter.requests.at(-1) ?? []
    expect(lastRequest.find((m) => m.role === 'tool')?.content).toBe(JSON.stringify(result?.result))
  })
})
