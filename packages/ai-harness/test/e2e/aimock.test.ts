import { pathToFileURL } from 'node:url'
import { LLMock } from '@copilotkit/aimock'
import { defineHarness } from '@tanstack/ai-harness'
import { openaiText } from '@tanstack/ai-openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createWorld, drain, isStepStarting, recordsOf, runUntilCrash } from '../support/harness.js'
import { seedPageStatus, writeSeedModule } from '../support/seed.js'
import { type FakeBilling, installSeedServices, type SeedTools } from '../support/seed-services.js'

let mock: LLMock
let tools: SeedTools
let billing: FakeBilling
const savedKey = process.env.OPENAI_API_KEY
// These tests run the seed page's checkout: without the page they are skipped with the
// reason (seed/seed-code-blocks.test.ts fails the run instead when CI is set).
const seed = seedPageStatus()
if (seed.state !== 'run') it.skip(`end to end on aimock skipped: ${seed.reason}`, () => {})

beforeAll(async () => {
  if (seed.state !== 'run') return
  mock = new LLMock({ host: '127.0.0.1', port: 0, strict: true })
  // The model asks for checkout while the turn has no tool result yet, then answers in text.
  mock.on({ userMessage: 'Check out order o1', hasToolResult: false }, { toolCalls: [{ name: 'checkout', arguments: '{"orderId":"o1"}' }] })
  mock.on({ userMessage: 'Check out order o1', hasToolResult: true }, { content: 'Order o1 is paid and invoiced.' })
  await mock.start()
  // openaiText reads the key from the environment; aimock accepts any key.
  process.env.OPENAI_API_KEY = 'test-key-for-aimock'
  const { path } = writeSeedModule('durable-tools.e2e.ts')
  installSeedServices()
  tools = (await import(/* @vite-ignore */ pathToFileURL(path).href)) as SeedTools
})

afterAll(async () => {
  await mock?.stop()
  if (savedKey === undefined) delete process.env.OPENAI_API_KEY
  else process.env.OPENAI_API_KEY = savedKey
})

beforeEach(() => {
  ;({ billing } = installSeedServices())
  mock.clearRequests()
  mock.resetMatchCounts()
})

function shopHarness() {
  const adapter = openaiText('gpt-4o', { baseURL: `${mock.url}/v1`, maxRetries: 0 })
  return defineHarness({ name: 'shop', adapter, tools: [tools.checkout] })
}

describe.runIf(seed.state === 'run')('end to end: the real openaiText adapter against aimock on loopback', () => {
  it("runs the seed's checkout in a harness session: one charge, one invoice, the turn finished", async () => {
    const world = createWorld()
    const machine = world.start(shopHarness(), 'host-1')
    const session = await machine.host.open({ sessionId: 'e2e' })
    const chunks = await drain(session.send('Check out order o1'))
    expect(chunks.some((c) => c.type === 'RUN_ERROR')).toBe(false)
    expect(billing.charges).toEqual([{ id: 'ch_1', orderId: 'o1' }])
    expect(billing.invoices).toEqual(['ch_1'])
    const entries = await session.entries()
    const [call] = recordsOf(entries, 'harness.assistant')[0]!.toolCalls as Array<{ id: string; name: string; arguments: string }>
    expect(call).toMatchObject({ name: 'checkout' })
    expect(JSON.parse(call!.arguments)).toEqual({ orderId: 'o1' })
    expect(recordsOf(entries, 'harness.step')).toMatchObject([
      { toolCallId: call!.id, name: 'charge:o1', value: { id: 'ch_1' } },
      { toolCallId: call!.id, name: 'invoice:ch_1' },
    ])
    expect(recordsOf(entries, 'harness.tool.result')).toMatchObject([
      { toolCallId: call!.id, toolName: 'checkout', ok: true, result: { chargeId: 'ch_1' }, cut: false },
    ])
    expect(recordsOf(entries, 'harness.assistant').at(-1)).toMatchObject({ text: 'Order o1 is paid and invoiced.', toolCalls: [] })
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    expect(mock.getRequests().map((r) => [r.method, r.path, r.response.status])).toEqual([
      ['POST', '/v1/responses', 200],
      ['POST', '/v1/responses', 200],
    ])
    await session.close()
  })

  it('after a crash between the steps, a fresh host resumes against aimock: still one charge and one invoice', async () => {
    const world = createWorld()
    const harness = shopHarness()
    const first = world.start(harness, 'host-1')
    first.store.crashOnAppend(isStepStarting('charge:'), 'after')
    const session = await first.host.open({ sessionId: 'e2e-crash' })
    await runUntilCrash(first, session.send('Check out order o1'))
    expect(billing.charges).toHaveLength(1)
    expect(billing.invoices).toHaveLength(0)

    world.expireLeases()
    const second = world.start(shopHarness(), 'host-2')
    const reopened = await second.host.open({ sessionId: 'e2e-crash' })
    expect(reopened.needsRecovery).toBe(true)
    const chunks = await drain(reopened.resume())
    expect(chunks.some((c) => c.type === 'RUN_ERROR')).toBe(false)
    expect(billing.charges).toEqual([{ id: 'ch_1', orderId: 'o1' }])
    expect(billing.invoices).toEqual(['ch_1'])
    const entries = await reopened.entries()
    expect(recordsOf(entries, 'harness.step').map((s) => s.name)).toEqual(['charge:o1', 'invoice:ch_1'])
    expect(recordsOf(entries, 'harness.tool.result')).toMatchObject([{ ok: true, result: { chargeId: 'ch_1' }, cut: false }])
    expect(recordsOf(entries, 'harness.assistant').at(-1)).toMatchObject({ text: 'Order o1 is paid and invoiced.' })
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    expect(mock.getRequests().map((r) => r.response.status)).toEqual([200, 200])
    await reopened.close()
  })
})
