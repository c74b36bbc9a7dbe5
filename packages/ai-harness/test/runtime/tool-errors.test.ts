import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool, HarnessError } from '@tanstack/ai-harness'
import { type HarnessErrorCode, LeaseLostError, LogConflictError } from '@tanstack/ai-harness/store'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, codeOf, createWorld, drain, isResultOf, recordsOf, runUntilCrash } from '../support/harness.js'

const probe = (name: string) => toolDefinition({ name, description: name, inputSchema: z.object({}) })

describe("a tool's own errors are tool errors for the model, whatever their code", () => {
  const thrown: Record<string, () => Error> = {
    'LEASE_LOST (a lease of another session)': () => new LeaseLostError('someone-elses-session'),
    'LOG_CONFLICT (a copied check)': () => new LogConflictError('another-log', 3, 4),
    STORE_UNAVAILABLE: () => new HarnessError('STORE_UNAVAILABLE', 'The inventory database is down.'),
  }
  for (const [what, make] of Object.entries(thrown)) {
    it(`a tool that throws ${what} gets a tool error; the turn finishes`, async () => {
      const world = createWorld()
      const error = make()
      const tool = durableTool(probe('reserve'), async (_a, { step }) => {
        await step.do('look', () => ({ stock: 3 }))
        throw error
      })
      const adapter = batchModel([{ name: 'reserve' }], 'The reservation failed.')
      const session = await world.start(defineHarness({ name: 'shop', adapter, tools: [tool] }), 'host').host.open({ sessionId: 's' })
      await drain(session.send('reserve'))
      const entries = await session.entries()
      expect(recordsOf(entries, 'harness.tool.result')).toMatchObject([{ ok: false, cut: false, result: { error: error.message } }])
      expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
      expect(session.status).toBe('idle')
      const seen = adapter.requests.at(-1)?.find((m) => m.role === 'tool')
      expect(JSON.parse(String(seen?.content))).toEqual({ error: error.message })
    })
  }

  it('a nested harness whose session fails inside a tool fails that tool, not the outer session', async () => {
    const world = createWorld()
    const innerStore = memoryStore({ data: world.data, clock: world.clock })
    // The inner session's log is taken by another writer: its run stops with LOG_CONFLICT.
    const innerTool = durableTool(probe('inner-work'), async (_a, { step }) => {
      await step.do('one', async () => {
        const tail = await innerStore.read('inner')
        await innerStore.append('inner', tail.length + 1, [{ type: 'app.intruder' }])
      })
      await step.do('two', () => 2)
      return 'inner done'
    })
    const inner = defineHarness({ name: 'inner', adapter: batchModel([{ name: 'inner-work' }]), tools: [innerTool] })
    const codes: HarnessErrorCode[] = []
    const outerTool = durableTool(probe('delegate'), async () => {
      const session = await createHost({ store: innerStore, harnesses: inner, clock: world.clock, hostId: 'nested' }).open({
        sessionId: 'inner',
      })
      try {
        await drain(session.send('go'))
      } catch (error) {
        codes.push((error as HarnessError).code)
        throw error
      } finally {
        await session.close()
      }
      return 'delegated'
    })
    const outer = defineHarness({ name: 'outer', adapter: batchModel([{ name: 'delegate' }]), tools: [outerTool] })
    const session = await world.start(outer, 'host').host.open({ sessionId: 'outer' })
    await drain(session.send('delegate'))
    expect(codes).toEqual(['LOG_CONFLICT'])
    const entries = await session.entries()
    expect(recordsOf(entries, 'harness.tool.result')).toMatchObject([{ ok: false, toolName: 'delegate' }])
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  })

  it('a session cut while such a tool ran resumes: the tool error is logged and the turn finishes', async () => {
    const world = createWorld()
    let runs = 0
    const tool = durableTool(probe('reserve'), async () => {
      runs++
      throw new LeaseLostError('someone-elses-session')
    })
    const harness = defineHarness({ name: 'shop', adapter: batchModel([{ name: 'reserve' }]), tools: [tool] })
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend(isResultOf('reserve'), 'before')
    await runUntilCrash(first, (await first.host.open({ sessionId: 's' })).send('reserve'))
    world.expireLeases()
    const reopened = await world.start(harness, 'host-2').host.open({ sessionId: 's' })
    await drain(reopened.resume())
    expect(runs).toBe(2)
    const entries = await reopened.entries()
    expect(recordsOf(entries, 'harness.tool.result')).toMatchObject([{ ok: false, cut: false }])
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  })
})

describe("the session's own failures stop the run, even when a tool wraps them", () => {
  it('a tool that wraps its lost step write in its own error stops the run, and nothing more is written', async () => {
    const world = createWorld()
    const intruder = memoryStore({ data: world.data, clock: world.clock })
    const tool = durableTool(probe('work'), async (_a, { step }) => {
      try {
        await step.do('one', async () => {
          const tail = await intruder.read('s')
          await intruder.append('s', tail.length + 1, [{ type: 'app.other-writer' }])
        })
      } catch (error) {
        throw new Error('work failed', { cause: error })
      }
      return 'done'
    })
    const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'work', args: {} }] } : 'ok'))
    const session = await world.start(defineHarness({ name: 'w', adapter, tools: [tool] }), 'host').host.open({ sessionId: 's' })
    expect(await codeOf(() => drain(session.send('go')))).toBe('LOG_CONFLICT')
    const entries = await world.read('s')
    expect(entries.at(-1)?.record.type).toBe('app.other-writer')
    expect(adapter.requests).toHaveLength(1)
  })
})
