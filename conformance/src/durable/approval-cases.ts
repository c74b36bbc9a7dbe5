import assert from 'node:assert/strict'
import { type StreamChunk, toolDefinition } from '@tanstack/ai'
import { createWorker, defineHarness, durableTool, HARNESS_EVENTS, type Harness } from '@tanstack/ai-harness'
import { DENIED_TOOL_ERROR, openWaits } from '@tanstack/ai-harness/log'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { type CaseContext, defineCase, expectCode, readFrom } from '../case.js'
import { recordsOf as harnessRecords, TEST_LEASE_MS as LEASE_MS } from '@tanstack/ai-harness/testing'
import { assertWellFormed, drain, runUntilCrash, startCaseMachine } from './fixtures.js'

/**
 * A model that calls `lookup` (a plain tool) and `refund` (a durable tool with
 * `needsApproval`) in one batch, then answers with what it saw.
 */
function refundHarness(runs: string[], replay: 'safe' | 'never' = 'safe'): { harness: Harness; seen: string[][] } {
  const seen: string[][] = []
  const refund = durableTool(
    toolDefinition({
      name: 'refund',
      description: 'Refunds a charge',
      inputSchema: z.object({ chargeId: z.string() }),
      needsApproval: true,
    }),
    async ({ chargeId }, { step }) => {
      const refunded = await step.do(`refund:${chargeId}`, () => {
        runs.push(`refund:${chargeId}`)
        return { id: 're_1' }
      })
      await step.do('notify', () => {
        runs.push('notify')
      })
      return { refundId: refunded.id }
    },
    { replay },
  )
  const lookup = toolDefinition({ name: 'lookup', description: 'Looks a charge up', inputSchema: z.object({}) }).server(async () => {
    runs.push('lookup')
    return 'found'
  })
  const adapter = scriptedText(({ messages }) => {
    if (messages.at(-1)?.role === 'user') {
      return {
        toolCalls: [
          { name: 'lookup', args: {}, id: 'call-lookup' },
          { name: 'refund', args: { chargeId: 'ch_9' }, id: 'call-refund' },
        ],
      }
    }
    seen.push(messages.filter((m) => m.role === 'tool').map((m) => String(m.content)))
    return 'Handled.'
  })
  return { harness: defineHarness({ name: 'refunds', adapter, tools: [lookup, refund] }), seen }
}

const customEvents = (chunks: StreamChunk[], name: string) =>
  chunks.filter((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === name).map((c) => (c as { value?: unknown }).value)

async function worker(context: CaseContext, harness: Harness, id: string) {
  return createWorker({
    store: await context.openStore(),
    harnesses: harness,
    clock: context.clock,
    workerId: id,
    leaseMs: LEASE_MS,
    holdMs: 60_000,
  })
}

const resultOf = (entries: Awaited<ReturnType<typeof readFrom>>, toolCallId: string) =>
  harnessRecords(entries, 'harness.tool.result').find((r) => r.toolCallId === toolCallId)

const waits = ['leases', 'wakeups'] as const

export const approvalCases = [
  defineCase({
    id: 'approval.approve.worker-resumes',
    title:
      'a call of a needsApproval tool logs its request and parks the batch with nothing run; host.approve from another host makes it due, and a worker runs the batch',
    requires: waits,
    async run(context) {
      const runs: string[] = []
      const { harness, seen } = refundHarness(runs)
      const proc = await startCaseMachine(context, harness, 'host')
      const session = await proc.host.open({ sessionId: 'refund' })
      const chunks = await drain(session.send('refund ch_9'))
      assert.deepEqual(runs, [], 'no call of the batch ran before the approval')
      assert.equal(session.status, 'parked')
      assert.deepEqual(customEvents(chunks, HARNESS_EVENTS.approval), [
        {
          sessionId: 'refund',
          toolCallId: 'call-refund',
          approvalId: 'approval_call-refund',
          toolName: 'refund',
          input: { chargeId: 'ch_9' },
        },
      ])
      const end = chunks.at(-1) as { type: string; outcome?: { type?: string; interrupts?: Array<{ id: string }> } }
      assert.equal(end.type, 'RUN_FINISHED', "the stream ends with TanStack AI's interrupt")
      assert.equal(end.outcome?.type, 'interrupt')
      assert.deepEqual(
        end.outcome?.interrupts?.map((i) => i.id),
        ['approval_call-refund'],
      )
      let entries = await readFrom(context.store, 'refund')
      assert.equal(harnessRecords(entries, 'harness.approval.requested').length, 1)
      assert.deepEqual(
        openWaits('refund', entries).approvals.map((a) => a.toolCallId),
        ['call-refund'],
        'the open approval is found from the log alone',
      )
      assert.deepEqual(await context.store.wakeups!.due(10), [], 'nothing is due before the decision')
      const other = await startCaseMachine(context, harness, 'back-office')
      await other.host.approve({ sessionId: 'refund', toolCallId: 'call-refund', approved: true })
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, ['refund'], 'the decision made the session due at once')
      assert.deepEqual(runs, ['lookup', 'refund:ch_9', 'notify'])
      entries = await readFrom(context.store, 'refund')
      assertWellFormed(entries)
      assert.deepEqual(resultOf(entries, 'call-refund')?.result, { refundId: 're_1' })
      assert.equal(harnessRecords(entries, 'harness.turn.finished').length, 1)
      assert.deepEqual(seen.at(-1), ['found', JSON.stringify({ refundId: 're_1' })])
      assert.deepEqual(openWaits('refund', entries).approvals, [])
      await w.stop()
    },
  }),
  defineCase({
    id: 'approval.deny.denial-result',
    title: "a denied call does not run: the model gets TanStack AI's denial result, and the rest of the batch runs",
    requires: waits,
    async run(context) {
      const runs: string[] = []
      const { harness, seen } = refundHarness(runs)
      const proc = await startCaseMachine(context, harness, 'host')
      await drain((await proc.host.open({ sessionId: 'refund' })).send('refund ch_9'))
      await proc.host.approve({ sessionId: 'refund', toolCallId: 'call-refund', approved: false, reason: 'not this one' })
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, ['refund'])
      assert.deepEqual(runs, ['lookup'], 'the denied tool did not run')
      const entries = await readFrom(context.store, 'refund')
      assertWellFormed(entries)
      const denied = resultOf(entries, 'call-refund')
      assert.equal(denied?.ok, false)
      assert.deepEqual(denied?.result, { error: DENIED_TOOL_ERROR })
      assert.equal(DENIED_TOOL_ERROR, 'User declined tool execution')
      assert.deepEqual(
        harnessRecords(entries, 'harness.approval.decided').map((r) => [r.approved, r.reason]),
        [[false, 'not this one']],
      )
      assert.deepEqual(seen.at(-1), ['found', JSON.stringify({ error: DENIED_TOOL_ERROR })])
      assert.equal(harnessRecords(entries, 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'approval.decision.survives-crash',
    title:
      'the logged decision holds after a crash of the run that acts on it: the approved call goes on, its finished steps are not run again, and nothing is asked again',
    requires: waits,
    async run(context) {
      const runs: string[] = []
      const { harness } = refundHarness(runs)
      const proc = await startCaseMachine(context, harness, 'host')
      await drain((await proc.host.open({ sessionId: 'refund' })).send('refund ch_9'))
      await proc.host.approve({ sessionId: 'refund', toolCallId: 'call-refund', approved: true })
      const crashing = await startCaseMachine(context, harness, 'crashing-worker')
      crashing.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step' && r.name === 'notify'), 'before')
      await runUntilCrash(crashing, (await crashing.host.open({ sessionId: 'refund' })).resume(), 'approved run')
      assert.deepEqual(runs, ['lookup', 'refund:ch_9', 'notify'])
      context.clock.advance(LEASE_MS + 1)
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, ['refund'], 'the dead host left a wakeup')
      assert.deepEqual(runs, ['lookup', 'refund:ch_9', 'notify', 'notify'], 'the stored step did not run again')
      const entries = await readFrom(context.store, 'refund')
      assertWellFormed(entries)
      assert.equal(harnessRecords(entries, 'harness.approval.requested').length, 1, 'the approval was not asked again')
      assert.equal(harnessRecords(entries, 'harness.approval.decided').length, 1)
      assert.deepEqual(resultOf(entries, 'call-refund')?.result, { refundId: 're_1' })
      assert.equal(harnessRecords(entries, 'harness.turn.finished').length, 1)
      await w.stop()
    },
  }),
  defineCase({
    id: 'approval.decision.second-refused',
    title:
      'a call takes one decision: a different second one is ALREADY_DECIDED, the same one again succeeds, an unknown call is APPROVAL_NOT_FOUND, and refusals write nothing',
    requires: waits,
    async run(context) {
      const { harness } = refundHarness([])
      const proc = await startCaseMachine(context, harness, 'host')
      await drain((await proc.host.open({ sessionId: 'refund' })).send('refund ch_9'))
      const other = await startCaseMachine(context, harness, 'other-host')
      const before = (await readFrom(context.store, 'refund')).length
      await expectCode(
        other.host.approve({ sessionId: 'refund', toolCallId: 'call-lookup', approved: true }),
        'APPROVAL_NOT_FOUND',
        'a call that needs no approval',
      )
      await expectCode(
        other.host.approve({ sessionId: 'refund', toolCallId: 'nope', approved: true }),
        'APPROVAL_NOT_FOUND',
        'unknown call',
      )
      assert.equal((await readFrom(context.store, 'refund')).length, before, 'a refused decision writes nothing')
      await other.host.approve({ sessionId: 'refund', toolCallId: 'call-refund', approved: true })
      await proc.host.approve({ sessionId: 'refund', toolCallId: 'call-refund', approved: true })
      const after = (await readFrom(context.store, 'refund')).length
      await expectCode(
        proc.host.approve({ sessionId: 'refund', toolCallId: 'call-refund', approved: false }),
        'ALREADY_DECIDED',
        'second decision',
      )
      const entries = await readFrom(context.store, 'refund')
      assert.equal(entries.length, after, 'the second decision wrote nothing')
      assert.deepEqual(
        harnessRecords(entries, 'harness.approval.decided').map((r) => r.approved),
        [true],
      )
    },
  }),
  defineCase({
    id: 'approval.cut-batch.waiting-not-cut',
    title:
      'a crash while a batch waits for approval cuts none of its calls, whatever their replay policy: a new host parks it again, and after the decision every call runs once',
    requires: waits,
    async run(context) {
      const runs: string[] = []
      const { harness } = refundHarness(runs, 'never')
      const first = await startCaseMachine(context, harness, 'host-1')
      // The host dies after the request is logged, before the park.
      first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.parked'), 'before')
      await runUntilCrash(first, (await first.host.open({ sessionId: 'refund' })).send('refund ch_9'), 'request')
      context.clock.advance(LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const reopened = await second.host.open({ sessionId: 'refund' })
      const chunks = await drain(reopened.resume())
      assert.deepEqual(
        customEvents(chunks, HARNESS_EVENTS.approval).map((a) => (a as { toolCallId: string }).toolCallId),
        ['call-refund'],
        'the call asks again on the stream',
      )
      let entries = await readFrom(context.store, 'refund')
      assert.deepEqual(harnessRecords(entries, 'harness.tool.result'), [], 'no call of the waiting batch was cut')
      assert.equal(harnessRecords(entries, 'harness.approval.requested').length, 1, 'the request is logged once')
      assert.equal(reopened.parked?.reason, 'approval')
      await second.host.approve({ sessionId: 'refund', toolCallId: 'call-refund', approved: true })
      const w = await worker(context, harness, 'worker')
      assert.deepEqual((await w.poll()).resumed, ['refund'])
      entries = await readFrom(context.store, 'refund')
      assertWellFormed(entries)
      assert.deepEqual(
        harnessRecords(entries, 'harness.tool.result').map((r) => [r.toolCallId, r.ok, r.cut]),
        [
          ['call-lookup', true, false],
          ['call-refund', true, false],
        ],
      )
      assert.deepEqual(runs, ['lookup', 'refund:ch_9', 'notify'], 'every call ran once')
      await w.stop()
    },
  }),
]
