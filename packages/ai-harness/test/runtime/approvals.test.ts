import { type StreamChunk, StreamProcessor, toolDefinition } from '@tanstack/ai'
import { agentTool, createWorker, defineHarness, durableTool, HARNESS_EVENTS, type Harness } from '@tanstack/ai-harness'
import { childSessionId, DENIED_TOOL_ERROR, openWaits } from '@tanstack/ai-harness/log'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { codeOf, createWorld, drain, recordsOf, runUntilCrash, TEST_LEASE_MS as LEASE_MS, type World } from '../support/harness.js'

/** A model that calls `pay` (which needs approval) and `note` (which does not) in one batch, then answers. */
function payHarness(runs: string[], options: { replay?: 'safe' | 'never' } = {}): Harness {
  const pay = durableTool(
    toolDefinition({ name: 'pay', description: 'Pays an invoice', inputSchema: z.object({ invoice: z.string() }), needsApproval: true }),
    async ({ invoice }, { step }) => {
      const charge = await step.do(`charge:${invoice}`, () => {
        runs.push(`charge:${invoice}`)
        return { id: 'ch_1' }
      })
      await step.do('receipt', () => {
        runs.push('receipt')
      })
      return { paid: charge.id }
    },
    { replay: options.replay ?? 'safe' },
  )
  const note = toolDefinition({ name: 'note', description: 'Notes something', inputSchema: z.object({}) }).server(async () => {
    runs.push('note')
    return 'noted'
  })
  const adapter = scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user'
      ? {
          toolCalls: [
            { name: 'note', args: {}, id: 'call-note' },
            { name: 'pay', args: { invoice: 'inv-7' }, id: 'call-pay' },
          ],
        }
      : `Model saw: ${messages
          .filter((m) => m.role === 'tool')
          .map((m) => m.content)
          .join(' | ')}`,
  )
  return defineHarness({ name: 'payer', adapter, tools: [note, pay] })
}

const named = (chunks: StreamChunk[], name: string) =>
  chunks.filter((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === name).map((c) => (c as { value?: unknown }).value)

function workerOf(world: World, harness: Harness, onChunk?: (chunk: StreamChunk) => void) {
  return createWorker({
    store: memoryStore({ data: world.data, clock: world.clock }),
    harnesses: harness,
    clock: world.clock,
    leaseMs: LEASE_MS,
    onChunk: (_id, chunk) => onChunk?.(chunk),
  })
}

describe('a tool with needsApproval in a durable session', () => {
  it('logs the request, parks before any call of the batch runs, and streams the approval as TanStack AI and the harness show it', async () => {
    const world = createWorld()
    const runs: string[] = []
    const { host } = world.start(payHarness(runs), 'host')
    const session = await host.open({ sessionId: 'pay' })
    const chunks = await drain(session.send('pay invoice 7'))
    expect(runs).toEqual([])
    expect(session.status).toBe('parked')
    expect(session.parked?.reason).toBe('approval')
    const approval = {
      sessionId: 'pay',
      toolCallId: 'call-pay',
      approvalId: 'approval_call-pay',
      toolName: 'pay',
      input: { invoice: 'inv-7' },
    }
    expect(named(chunks, HARNESS_EVENTS.approval)).toEqual([approval])
    expect(named(chunks, HARNESS_EVENTS.parked)).toEqual([{ reason: 'approval', until: null, toolCallId: 'call-pay' }])
    const last = chunks.at(-1) as { type: string; outcome?: unknown }
    expect(last.type).toBe('RUN_FINISHED')
    expect(last.outcome).toEqual({
      type: 'interrupt',
      interrupts: [
        {
          id: 'approval_call-pay',
          reason: 'tool_call',
          message: 'Approval required to run pay',
          toolCallId: 'call-pay',
          metadata: { kind: 'approval', toolName: 'pay', input: { invoice: 'inv-7' } },
        },
      ],
    })
    const entries = await world.read('pay')
    expect(recordsOf(entries, 'harness.approval.requested')).toMatchObject([{ toolCallId: 'call-pay', toolName: 'pay' }])
    expect(recordsOf(entries, 'harness.parked')).toMatchObject([{ reason: 'approval', toolCallId: 'call-pay', notStarted: ['call-note'] }])
    expect(recordsOf(entries, 'harness.tool.result')).toEqual([])
    expect(openWaits('pay', entries)).toEqual({ questions: [], approvals: [approval] })
    expect(await memoryStore({ data: world.data, clock: world.clock }).wakeups!.due(10)).toEqual([])
  })

  it("is an approval request to TanStack AI's own stream processor: the tool-call part waits for approval and onApprovalRequest fires", async () => {
    const world = createWorld()
    const { host } = world.start(payHarness([]), 'host')
    const chunks = await drain((await host.open({ sessionId: 'pay' })).send('pay'))
    const requests: unknown[] = []
    const processor = new StreamProcessor({ events: { onApprovalRequest: (request) => requests.push(request) } })
    processor.prepareAssistantMessage()
    for (const chunk of chunks) processor.processChunk(chunk)
    expect(requests).toEqual([{ toolCallId: 'call-pay', toolName: 'pay', input: { invoice: 'inv-7' }, approvalId: 'approval_call-pay' }])
    const parts = processor.getMessages().flatMap((m) => m.parts)
    expect(parts.find((p) => p.type === 'tool-call' && p.id === 'call-pay')).toMatchObject({
      state: 'approval-requested',
      approval: { id: 'approval_call-pay', needsApproval: true },
    })
  })

  it('approved from another host: a worker resumes the turn, the batch runs, and the call runs with its steps', async () => {
    const world = createWorld()
    const runs: string[] = []
    const harness = payHarness(runs)
    await drain((await world.start(harness, 'host').host.open({ sessionId: 'pay' })).send('pay'))
    await world
      .start(harness, 'back-office')
      .host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true, reason: 'ok by Ann' })
    const worker = workerOf(world, harness)
    expect((await worker.poll()).resumed).toEqual(['pay'])
    expect(runs).toEqual(['note', 'charge:inv-7', 'receipt'])
    const entries = await world.read('pay')
    expect(recordsOf(entries, 'harness.approval.decided')).toMatchObject([{ toolCallId: 'call-pay', approved: true, reason: 'ok by Ann' }])
    expect(recordsOf(entries, 'harness.tool.result').map((r) => [r.toolCallId, r.ok, r.result])).toEqual([
      ['call-note', true, 'noted'],
      ['call-pay', true, { paid: 'ch_1' }],
    ])
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    expect(openWaits('pay', entries).approvals).toEqual([])
  })

  it("denied: the tool does not run and the model gets TanStack AI's denial result", async () => {
    const world = createWorld()
    const runs: string[] = []
    const harness = payHarness(runs)
    const { host } = world.start(harness, 'host')
    await drain((await host.open({ sessionId: 'pay' })).send('pay'))
    await host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: false })
    expect((await workerOf(world, harness).poll()).resumed).toEqual(['pay'])
    expect(runs).toEqual(['note'])
    const entries = await world.read('pay')
    expect(recordsOf(entries, 'harness.tool.result').find((r) => r.toolCallId === 'call-pay')).toMatchObject({
      ok: false,
      result: { error: DENIED_TOOL_ERROR },
      cut: false,
    })
    expect(DENIED_TOOL_ERROR).toBe('User declined tool execution')
    expect(recordsOf(entries, 'harness.assistant').at(-1)?.text).toContain(JSON.stringify({ error: DENIED_TOOL_ERROR }))
  })

  it('takes one decision: the same one again succeeds, another is ALREADY_DECIDED, an unknown call APPROVAL_NOT_FOUND, and a reason with a secret is refused', async () => {
    const world = createWorld()
    const secret = 'sk_live_approval_0123456789'
    const harness = payHarness([])
    const withSecret = defineHarness({
      ...harness.options,
      secretNames: ['key'],
      resolveSecret: async () => secret,
    })
    const { host } = world.start(withSecret, 'host')
    await drain((await host.open({ sessionId: 'pay' })).send('pay'))
    const before = (await world.read('pay')).length
    expect(await codeOf(() => host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true, reason: `key ${secret}` }))).toBe(
      'RECORD_SECRET',
    )
    expect(await codeOf(() => host.approve({ sessionId: 'pay', toolCallId: 'call-note', approved: true }))).toBe('APPROVAL_NOT_FOUND')
    expect(await codeOf(() => host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: 'yes' as never }))).toBe(
      'INVALID_ARGUMENT',
    )
    expect((await world.read('pay')).length).toBe(before)
    await host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true })
    await host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true })
    expect(await codeOf(() => host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: false }))).toBe('ALREADY_DECIDED')
    expect(recordsOf(await world.read('pay'), 'harness.approval.decided')).toHaveLength(1)
  })

  it('keeps the decision across a crash of the run that acts on it: the call goes on, and its finished steps do not run again', async () => {
    const world = createWorld()
    const runs: string[] = []
    const harness = payHarness(runs)
    const { host } = world.start(harness, 'host')
    await drain((await host.open({ sessionId: 'pay' })).send('pay'))
    await host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true })
    const crashing = world.start(harness, 'crashing-worker')
    crashing.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step' && r.name === 'receipt'), 'before')
    const reopened = await crashing.host.open({ sessionId: 'pay' })
    await runUntilCrash(crashing, reopened.resume())
    expect(runs).toEqual(['note', 'charge:inv-7', 'receipt'])
    world.expireLeases()
    expect((await workerOf(world, harness).poll()).resumed).toEqual(['pay'])
    expect(runs).toEqual(['note', 'charge:inv-7', 'receipt', 'receipt'])
    const entries = await world.read('pay')
    expect(recordsOf(entries, 'harness.approval.requested')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.tool.result').find((r) => r.toolCallId === 'call-pay')).toMatchObject({ ok: true })
  })

  it('a call that waits for approval is not cut by a crash, whatever its replay policy, and parks again', async () => {
    const world = createWorld()
    const runs: string[] = []
    const harness = payHarness(runs, { replay: 'never' })
    const first = world.start(harness, 'host-1')
    // The host dies after the request is logged, before the park.
    first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.parked'), 'before')
    await runUntilCrash(first, (await first.host.open({ sessionId: 'pay' })).send('pay'))
    world.expireLeases()
    const chunks: StreamChunk[] = []
    expect((await workerOf(world, harness, (c) => chunks.push(c)).poll()).resumed).toEqual(['pay'])
    expect(named(chunks, HARNESS_EVENTS.approval)).toMatchObject([{ toolCallId: 'call-pay' }])
    let entries = await world.read('pay')
    expect(recordsOf(entries, 'harness.tool.result')).toEqual([])
    expect(recordsOf(entries, 'harness.parked')).toHaveLength(1)
    await world.start(harness, 'back-office').host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true })
    expect((await workerOf(world, harness).poll()).resumed).toEqual(['pay'])
    entries = await world.read('pay')
    expect(recordsOf(entries, 'harness.tool.result').map((r) => [r.toolCallId, r.ok, r.cut])).toEqual([
      ['call-note', true, false],
      ['call-pay', true, false],
    ])
    expect(runs).toEqual(['note', 'charge:inv-7', 'receipt'])
  })

  it('an approved call of a replay-never tool that a crash cut after it may have started gets the tool error, not a second run', async () => {
    const world = createWorld()
    const runs: string[] = []
    const harness = payHarness(runs, { replay: 'never' })
    const { host } = world.start(harness, 'host')
    await drain((await host.open({ sessionId: 'pay' })).send('pay'))
    await host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true })
    const crashing = world.start(harness, 'crashing-worker')
    crashing.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step' && r.name === 'receipt'), 'before')
    await runUntilCrash(crashing, (await crashing.host.open({ sessionId: 'pay' })).resume())
    world.expireLeases()
    expect((await workerOf(world, harness).poll()).resumed).toEqual(['pay'])
    expect(runs).toEqual(['note', 'charge:inv-7', 'receipt'])
    const result = recordsOf(await world.read('pay'), 'harness.tool.result').find((r) => r.toolCallId === 'call-pay')
    expect(result).toMatchObject({ ok: false, cut: true })
  })

  it("an agent tool whose child session waits for approval: the parent's stream carries the child's approval, and approving it in the child finishes both", async () => {
    const world = createWorld()
    const runs: string[] = []
    const child = payHarness(runs)
    const delegate = agentTool(toolDefinition({ name: 'delegate', description: 'd', inputSchema: z.object({}) }), {
      harness: child,
      prompt: () => 'pay invoice 7',
    })
    const parent = defineHarness({
      name: 'boss',
      adapter: scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'delegate', args: {}, id: 'call-delegate' }] } : 'Delegated.',
      ),
      tools: [delegate],
    })
    const { host } = world.start([parent, child], 'host')
    const chunks = await drain((await host.open({ sessionId: 'boss', harness: 'boss' })).send('go'))
    const childId = childSessionId('boss', 'call-delegate')
    expect(named(chunks, HARNESS_EVENTS.approval)).toMatchObject([{ sessionId: childId, toolCallId: 'call-pay', toolName: 'pay' }])
    await host.approve({ sessionId: childId, toolCallId: 'call-pay', approved: true })
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: [parent, child],
      clock: world.clock,
      leaseMs: LEASE_MS,
    })
    expect((await worker.poll()).resumed).toEqual([childId])
    expect((await worker.poll()).resumed).toEqual(['boss'])
    expect(runs).toEqual(['note', 'charge:inv-7', 'receipt'])
    expect(recordsOf(await world.read('boss'), 'harness.turn.finished')).toHaveLength(1)
  })

  it('an agent call in a batch that waited for approval runs after the approval: it was waiting, not cut', async () => {
    const world = createWorld()
    const runs: string[] = []
    const helper = defineHarness({
      name: 'helper',
      adapter: scriptedText(() => 'Helped.'),
      tools: [],
    })
    const help = agentTool(toolDefinition({ name: 'help', description: 'h', inputSchema: z.object({}) }), {
      harness: helper,
      prompt: () => 'help',
    })
    const pay = durableTool(
      toolDefinition({ name: 'pay', description: 'Pays', inputSchema: z.object({}), needsApproval: true }),
      async (_a, { step }) => step.do('charge', () => void runs.push('charge')),
    )
    const boss = defineHarness({
      name: 'boss',
      adapter: scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user'
          ? {
              toolCalls: [
                { name: 'pay', args: {}, id: 'call-pay' },
                { name: 'help', args: {}, id: 'call-help' },
              ],
            }
          : 'Done.',
      ),
      tools: [pay, help],
    })
    const { host } = world.start([boss, helper], 'host')
    await drain((await host.open({ sessionId: 'boss', harness: 'boss' })).send('go'))
    await host.approve({ sessionId: 'boss', toolCallId: 'call-pay', approved: true })
    const worker = createWorker({
      store: memoryStore({ data: world.data, clock: world.clock }),
      harnesses: [boss, helper],
      clock: world.clock,
      leaseMs: LEASE_MS,
    })
    expect((await worker.poll()).resumed).toEqual(['boss'])
    expect(runs).toEqual(['charge'])
    const results = recordsOf(await world.read('boss'), 'harness.tool.result')
    expect(results.map((r) => [r.toolCallId, r.ok, r.cut])).toEqual([
      ['call-pay', true, false],
      ['call-help', true, false],
    ])
    expect(results.find((r) => r.toolCallId === 'call-help')?.result).toBe('Helped.')
  })
})

describe('person input checked against rules the host may not know', () => {
  const KEY = 'sk_live_given_at_open_0123456789'

  it('the host that holds the session refuses a reason or an answer with a secret given to host.open, as it refuses a prompt with it', async () => {
    const world = createWorld()
    const { host } = world.start(payHarness([]), 'host')
    const session = await host.open({ sessionId: 'pay', secrets: { apiKey: KEY } })
    expect(await codeOf(() => drain(session.send(`use ${KEY}`)))).toBe('RECORD_SECRET')
    await drain(session.send('pay'))
    const before = (await world.read('pay')).length
    expect(await codeOf(() => host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true, reason: `ok ${KEY}` }))).toBe(
      'RECORD_SECRET',
    )
    expect((await world.read('pay')).length).toBe(before)
    await host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true, reason: 'ok' })
    expect(recordsOf(await world.read('pay'), 'harness.approval.decided')).toMatchObject([{ reason: 'ok' }])
  })

  it("a host that does not run the session's harness refuses an answer and a reason it cannot check (CAPABILITY_MISSING), writing nothing", async () => {
    const world = createWorld()
    const { host } = world.start(payHarness([]), 'host')
    await drain((await host.open({ sessionId: 'pay' })).send('pay'))
    const blind = world.start([], 'inspector').host
    const before = (await world.read('pay')).length
    expect(await codeOf(() => blind.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: false, reason: 'too much' }))).toBe(
      'CAPABILITY_MISSING',
    )
    expect((await world.read('pay')).length).toBe(before)
    // Without a reason there is nothing to check: the decision is logged.
    await blind.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: false })
    expect(recordsOf(await world.read('pay'), 'harness.approval.decided')).toHaveLength(1)
  })
})
