import { toolDefinition } from '@tanstack/ai'
import { defineHarness, type HarnessOptions } from '@tanstack/ai-harness'
import { DEFAULT_CUT_TOOL_ERROR } from '@tanstack/ai-harness/log'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  asSeenByModel,
  batchModel,
  codeOf,
  createWorld,
  drain,
  isResultOf,
  lastToolMessages,
  recordsOf,
  runUntilCrash,
} from '../support/harness.js'

/** A plain (non-durable) tool that counts its runs. */
function lookupTool() {
  const runs = { count: 0 }
  const tool = toolDefinition({ name: 'lookup', description: 'Looks an order up', inputSchema: z.object({}) }).server(async () => {
    runs.count++
    return { status: 'shipped' }
  })
  return { tool, runs }
}

/** Crashes a turn before the lookup's result is logged, then resumes it on a fresh host. */
async function crashAndResume(options: Partial<HarnessOptions>) {
  const world = createWorld()
  const { tool, runs } = lookupTool()
  const adapter = batchModel([{ name: 'lookup' }])
  const harness = defineHarness({ name: 'orders', adapter, tools: [tool], ...options })
  const first = world.start(harness, 'host-1')
  first.store.crashOnAppend(isResultOf('lookup'), 'before')
  const session = await first.host.open({ sessionId: 'orders' })
  await runUntilCrash(first, session.send('where is my order?'))
  expect(runs.count).toBe(1)

  world.expireLeases()
  const reopened = await world.start(harness, 'host-2').host.open({ sessionId: 'orders' })
  await drain(reopened.resume())
  const entries = await reopened.entries()
  const [result] = recordsOf(entries, 'harness.tool.result')
  expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  return { runs, result: result!, seen: lastToolMessages(adapter) }
}

describe('recovery of a plain tool cut by a crash', () => {
  it('gets the default cut tool error and does not run again', async () => {
    const { runs, result, seen } = await crashAndResume({})
    expect(runs.count).toBe(1)
    expect(result).toMatchObject({ ok: false, cut: true, result: { error: DEFAULT_CUT_TOOL_ERROR } })
    expect(seen.map((m) => m.content)).toEqual([asSeenByModel(result.result)])
  })

  it('gets the text of the cutToolError option, which is what the model sees', async () => {
    const cutToolError = 'The lookup was interrupted. Ask the user before looking again.'
    const { runs, result, seen } = await crashAndResume({ cutToolError })
    expect(runs.count).toBe(1)
    expect(result).toMatchObject({ ok: false, cut: true, result: { error: cutToolError } })
    expect(seen.map((m) => m.content)).toEqual([asSeenByModel({ error: cutToolError })])
  })

  it("runs again after a crash when defineHarness has replay: { lookup: 'safe' }", async () => {
    const { runs, result, seen } = await crashAndResume({ replay: { lookup: 'safe' } })
    expect(runs.count).toBe(2)
    expect(result).toMatchObject({ ok: true, cut: false, result: { status: 'shipped' } })
    expect(seen.map((m) => m.content)).toEqual([asSeenByModel({ status: 'shipped' })])
  })
})

describe('a session belongs to the harness that made it', () => {
  it('a host opening it with another harness fails with a typed error, writes nothing, and frees the session', async () => {
    const world = createWorld()
    const shop = defineHarness({ name: 'shop', adapter: batchModel([]), tools: [] })
    const support = defineHarness({ name: 'support', adapter: batchModel([]), tools: [] })
    const first = world.start(shop, 'host-1')
    const session = await first.host.open({ sessionId: 'made-by-shop' })
    await session.close()
    const before = await world.read('made-by-shop')

    const other = world.start([shop, support], 'host-2')
    expect(await codeOf(() => other.host.open({ sessionId: 'made-by-shop', harness: 'support' }))).toBe('INVALID_ARGUMENT')
    expect(await codeOf(() => world.start(support, 'host-3').host.open({ sessionId: 'made-by-shop' }))).toBe('INVALID_ARGUMENT')
    expect(await world.read('made-by-shop')).toEqual(before)
    const reopened = await world.start(shop, 'host-4').host.open({ sessionId: 'made-by-shop' })
    expect(reopened.harness.name).toBe('shop')
    await reopened.close()
  })
})
