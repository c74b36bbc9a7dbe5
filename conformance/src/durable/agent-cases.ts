import assert from 'node:assert/strict'
import { toolDefinition } from '@tanstack/ai'
import { agentTool, createWorker, defineHarness, durableTool, HARNESS_EVENTS } from '@tanstack/ai-harness'
import { childSessionId, DEFAULT_CUT_TOOL_ERROR } from '@tanstack/ai-harness/log'
import { enumerateAgentCrashPoints, recordsOf, scriptedText, TEST_LEASE_MS } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { defineCase, readFrom } from '../case.js'
import { assertWellFormed, drain, runUntilCrash, startCaseMachine } from './fixtures.js'

/** A child agent whose one tool asks a person to confirm; and a parent that delegates to it. */
function agents(runs: string[]) {
  const confirm = durableTool(toolDefinition({ name: 'confirm', description: 'c', inputSchema: z.object({}) }), async (_a, { step }) => {
    await step.do('prepare', () => {
      runs.push('prepare')
    })
    const answer = await step.ask({ name: 'ok', message: 'Go ahead?', schema: z.object({ ok: z.boolean() }) })
    return answer.ok ? 'confirmed' : 'declined'
  })
  const child = defineHarness({
    name: 'helper',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'The helper is done.',
    ),
    tools: [confirm],
  })
  const delegate = agentTool(toolDefinition({ name: 'delegate', description: 'd', inputSchema: z.object({ task: z.string() }) }), {
    harness: child,
    prompt: ({ task }) => `Please do: ${task}`,
  })
  const parent = defineHarness({
    name: 'boss',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'delegate', args: { task: 'ship' } }] } : 'All delegated.',
    ),
    tools: [delegate],
  })
  return { parent, child }
}

/** The writes at the moments the seed's rule for agent calls tells apart (see enumerateAgentCrashPoints). */
const CHILD_MOMENTS = /^append boss\/agent\/[^ ]+ \[(harness\.(step|ask|parked|answer)|[^\]]*harness\.turn\.finished)\]$/

export const agentCases = [
  defineCase({
    id: 'agent.crash-points',
    title:
      'a crash right after the child writes a step, its question, its park, the answer or its end leaves one outcome of the agent call, the one the seed prescribes, and nothing waiting with nothing to wake it',
    requires: ['leases', 'wakeups'],
    async run(context) {
      const report = await enumerateAgentCrashPoints({
        world: async () => ({ clock: context.clock, openStore: (await context.openNamespace()).openStore }),
        select: (write) => CHILD_MOMENTS.test(write),
        leaseMs: TEST_LEASE_MS,
      })
      assert.equal(report.points.length, 6, `six moments of the child, found: ${report.points.map((p) => p.write).join('; ')}`)
      assert.deepEqual(report.failures, [], 'every crash point holds')
      assert.deepEqual(
        report.points.map((p) => p.outcome),
        ['cut', 'result', 'result', 'result', 'result', 'result'],
        'cut while running, else the child goes on',
      )
    },
  }),
  defineCase({
    id: 'agent.waits-for-a-person',
    title: 'an agent-tool call whose child waits for a person keeps its place and goes on after the answer',
    requires: ['leases', 'wakeups'],
    async run(context) {
      const runs: string[] = []
      const { parent, child } = agents(runs)
      const proc = await startCaseMachine(context, parent, 'host')
      const session = await proc.host.open({ sessionId: 'boss' })
      const chunks = await drain(session.send('ship it'))
      const questions = chunks.filter((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === HARNESS_EVENTS.question)
      assert.equal(questions.length, 1, "the child's question reaches the parent's stream")
      const question = (questions[0] as { value: { sessionId: string; questionId: string } }).value
      const [assistant] = recordsOf(await readFrom(context.store, 'boss'), 'harness.assistant')
      const call = (assistant?.toolCalls as Array<{ id: string }>)[0]!
      assert.equal(question.sessionId, childSessionId('boss', call.id))
      assert.equal(recordsOf(await readFrom(context.store, 'boss'), 'harness.parked')[0]?.reason, 'agent')
      await proc.host.answer({ sessionId: question.sessionId, questionId: question.questionId, answer: { ok: true } })
      const worker = createWorker({
        store: await context.openStore(),
        harnesses: [parent, child],
        clock: context.clock,
        leaseMs: TEST_LEASE_MS,
      })
      assert.deepEqual((await worker.poll()).resumed, [question.sessionId], 'the answered child goes on first')
      assert.deepEqual((await worker.poll()).resumed, ['boss'], 'then its finished child wakes the parent')
      const entries = await readFrom(context.store, 'boss')
      assertWellFormed(entries)
      assert.equal(recordsOf(entries, 'harness.tool.result')[0]?.result, 'The helper is done.')
      assert.equal(recordsOf(entries, 'harness.turn.finished').length, 1)
      assert.deepEqual(runs, ['prepare'], "the child's step ran once")
      await worker.stop()
    },
  }),
  defineCase({
    id: 'agent.cut-gets-tool-error',
    title: 'after a crash, a cut agent-tool call gets a tool error and does not run again',
    async run(context) {
      const runs: string[] = []
      const { parent } = agents(runs)
      const first = await startCaseMachine(context, parent, 'host-1')
      first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.step' && r.name === 'prepare'), 'after')
      const session = await first.host.open({ sessionId: 'boss' })
      await runUntilCrash(first, session.send('ship it'), 'delegate')
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, parent, 'host-2')
      const reopened = await second.host.open({ sessionId: 'boss' })
      await drain(reopened.resume())
      const entries = await reopened.entries()
      assertWellFormed(entries)
      const result = recordsOf(entries, 'harness.tool.result')[0]!
      assert.deepEqual(result.result, { error: DEFAULT_CUT_TOOL_ERROR })
      assert.equal(result.cut, true)
      assert.deepEqual(runs, ['prepare'], 'the child did not run again')
      await reopened.close()
    },
  }),
]
