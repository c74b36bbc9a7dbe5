import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, HARNESS_EVENTS } from '@tanstack/ai-harness'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { drain, recordsOf } from '../support/harness.js'
import { askHarness, type FaultMachine, faultWorld } from '../support/faults.js'

/** A harness whose one tool needs approval before it runs. */
function approvalHarness(runs: string[]) {
  return defineHarness({
    name: 'approver',
    adapter: scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'pay', args: {}, id: 'call-pay' }] } : 'Paid.',
    ),
    tools: [
      durableTool(
        toolDefinition({ name: 'pay', description: 'Pays', inputSchema: z.object({}), needsApproval: true }),
        async (_args, { step }) => step.do('charge', () => void runs.push('charge')),
      ),
    ],
  })
}

/**
 * The machine dies right after the record of `type` lands: from then on every wakeup it
 * would schedule fails, as the wakeup after the append never happens in a dead process.
 */
function crashAfterAppendOf(machine: FaultMachine, type: string): void {
  let landed = false
  machine.store.inject({
    match: (call) => {
      if (call.op === 'append' && (call.args[2] as LogRecord[]).some((r) => r.type === type)) landed = true
      return false
    },
    fault: { kind: 'fail' },
  })
  machine.store.inject({
    match: (call) => call.op === 'wakeups.schedule' && landed,
    fault: { kind: 'fail' },
    times: Number.POSITIVE_INFINITY,
  })
}

// A person's input wakes a session that waits at WAITING_FOR_PERSON (never due). The wakeup
// goes before the append too, so a crash between the append and the wakeup after it never
// leaves the input logged with nothing to wake the session.
describe('a crash between the logged input of a person and its wakeup', () => {
  it('an approval: the decision is logged, and a worker still finds the session due and runs the call', async () => {
    const world = faultWorld()
    const runs: string[] = []
    const harness = approvalHarness(runs)
    await drain((await world.machine(harness, 'host').host.open({ sessionId: 'pay' })).send('pay'))
    expect(runs).toEqual([])
    const office = world.machine(harness, 'back-office')
    crashAfterAppendOf(office, 'harness.approval.decided')
    await expect(office.host.approve({ sessionId: 'pay', toolCallId: 'call-pay', approved: true })).rejects.toThrow()
    expect(recordsOf(await world.read('pay'), 'harness.approval.decided')).toHaveLength(1)
    expect((await world.worker(harness, 'worker').poll()).resumed).toEqual(['pay'])
    expect(runs).toEqual(['charge'])
  })

  it('an answer: the answer is logged, and a worker still finds the session due and finishes the turn', async () => {
    const world = faultWorld()
    const harness = askHarness()
    const chunks = await drain((await world.machine(harness, 'host').host.open({ sessionId: 'ask' })).send('go'))
    const question = chunks.find((c) => c.type === 'CUSTOM' && (c as { name?: string }).name === HARNESS_EVENTS.question) as unknown as {
      value: { questionId: string }
    }
    const person = world.machine(harness, 'person')
    crashAfterAppendOf(person, 'harness.answer')
    await expect(person.host.answer({ sessionId: 'ask', questionId: question.value.questionId, answer: { ok: true } })).rejects.toThrow()
    expect(recordsOf(await world.read('ask'), 'harness.answer')).toHaveLength(1)
    expect((await world.worker(harness, 'worker').poll()).resumed).toEqual(['ask'])
    expect(recordsOf(await world.read('ask'), 'harness.tool.result')[0]?.result).toBe('yes')
  })
})
