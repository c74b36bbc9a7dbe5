import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool } from '@tanstack/ai-harness'
import type { LogEntry } from '@tanstack/ai-harness/store'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, codeOf, createWorld, drain, isStepNamed, recordsOf, runUntilCrash } from '../support/harness.js'

const probe = (name: string) => toolDefinition({ name, description: name, inputSchema: z.object({}) })

describe('step.do in a harness session', () => {
  it('the same step name twice in one call throws STEP_DUPLICATE_NAME on the first run and on the run after a crash', async () => {
    const world = createWorld()
    const codes: string[] = []
    const ran: string[] = []
    const tool = durableTool(probe('pack'), async (_args, { step }) => {
      await step.do('box', () => {
        ran.push('box')
        return { box: 'b1' }
      })
      codes.push(
        await codeOf(() =>
          step.do('box', () => {
            ran.push('box again')
            return { box: 'b2' }
          }),
        ),
      )
      await step.do('label', () => ({ label: 'L1' }))
      return 'packed'
    })
    const harness = defineHarness({ name: 'steps', adapter: batchModel([{ name: 'pack' }]), tools: [tool] })
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend(isStepNamed('label'), 'before')
    const session = await first.host.open({ sessionId: 'dup' })
    await runUntilCrash(first, session.send('pack it'))
    expect(codes).toEqual(['STEP_DUPLICATE_NAME'])

    world.expireLeases()
    const reopened = await world.start(harness, 'host-2').host.open({ sessionId: 'dup' })
    await drain(reopened.resume())
    expect(codes).toEqual(['STEP_DUPLICATE_NAME', 'STEP_DUPLICATE_NAME'])
    expect(ran).toEqual(['box'])
    const steps = recordsOf(await reopened.entries(), 'harness.step')
    expect(steps.map((s) => s.name)).toEqual(['box', 'label'])
  })

  it('the idempotency key is logId:toolCallId:name', async () => {
    const world = createWorld()
    const keys: string[] = []
    let toolCallId: string | undefined
    const tool = durableTool(probe('charge'), async (_args, { step, toolCallId: id }) => {
      toolCallId = id
      await step.do('charge:o1', ({ idempotencyKey }) => {
        keys.push(idempotencyKey)
      })
      return 'charged'
    })
    const harness = defineHarness({ name: 'steps', adapter: batchModel([{ name: 'charge' }]), tools: [tool] })
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'shop-1' })
    await drain(session.send('charge'))
    expect(keys).toEqual([`shop-1:${toolCallId}:charge:o1`])
  })

  it('a step value over maxStepBytes is refused with STEP_TOO_LARGE, and nothing is logged', async () => {
    const world = createWorld()
    let code = ''
    const tool = durableTool(probe('big'), async (_args, { step }) => {
      code = await codeOf(() => step.do('report', () => ({ text: 'x'.repeat(500) })))
      await step.do('small', () => ({ id: 'r1' }))
      return 'ok'
    })
    const harness = defineHarness({ name: 'steps', adapter: batchModel([{ name: 'big' }]), tools: [tool], maxStepBytes: 200 })
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'big' })
    await drain(session.send('go'))
    expect(code).toBe('STEP_TOO_LARGE')
    expect(recordsOf(await session.entries(), 'harness.step').map((s) => s.name)).toEqual(['small'])
  })

  it("the step size limit is never above the store's record limit: a bigger step is STEP_TOO_LARGE, not a store error", async () => {
    let code = ''
    const tool = durableTool(probe('big'), async (_args, { step }) => {
      code = await codeOf(() => step.do('report', () => ({ text: 'x'.repeat(2_000) })))
      return 'ok'
    })
    const harness = defineHarness({ name: 'steps', adapter: batchModel([{ name: 'big' }]), tools: [tool] })
    const store = memoryStore({ limits: { maxRecordBytes: 1_000 } })
    const session = await createHost({ store, harnesses: harness }).open({ sessionId: 'big' })
    await drain(session.send('go'))
    expect(code).toBe('STEP_TOO_LARGE')
    expect(recordsOf(await session.entries(), 'harness.step')).toEqual([])
  })

  it('the assistant message with all its tool calls is in the log before any tool of the batch runs', async () => {
    const world = createWorld()
    const sawAtStart: Array<{ me: string | undefined; logged: string[] }> = []
    let read: () => Promise<LogEntry[]> = async () => []
    const tool = (name: string) =>
      durableTool(probe(name), async (_args, { toolCallId }) => {
        const entries = await read()
        const logged = recordsOf(entries, 'harness.assistant').flatMap((r) =>
          (r.toolCalls as Array<{ id: string; name: string }>).map((c) => `${c.name}:${c.id}`),
        )
        sawAtStart.push({ me: `${name}:${toolCallId}`, logged })
        return 'ok'
      })
    const harness = defineHarness({ name: 'steps', adapter: batchModel([{ name: 'a' }, { name: 'b' }]), tools: [tool('a'), tool('b')] })
    const machine = world.start(harness, 'host-1')
    read = () => machine.store.read('batch')
    const session = await machine.host.open({ sessionId: 'batch' })
    await drain(session.send('go'))
    expect(sawAtStart).toHaveLength(2)
    const bothCalls = sawAtStart.map((s) => s.me).sort()
    for (const seen of sawAtStart) expect([...seen.logged].sort()).toEqual(bothCalls)
    const results = recordsOf(await session.entries(), 'harness.tool.result')
    expect(results.map((r) => `${r.toolName}:${r.toolCallId}`).sort()).toEqual(bothCalls)
  })
})
