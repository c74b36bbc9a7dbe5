import { describe, expect, it } from 'vitest'
import { foldLog } from '../../src/log.js'
import type { LogRecord } from '../../src/store/index.js'

// One journal per tool call: everything the log says of a call is in `state.calls`, and
// the per-call maps of the state are read-only views of the journals.

const records: LogRecord[] = [
  { type: 'harness.session.opened', harness: 'h', at: 0, parent: null },
  { type: 'harness.turn.started', turnId: 't1', messages: [{ role: 'user', content: 'go' }], at: 1, host: 'h1', fence: 1 },
  {
    type: 'harness.assistant',
    turnId: 't1',
    text: '',
    toolCalls: [
      { id: 'c1', name: 'pay', arguments: '{"n":1}' },
      { id: 'c:2', name: 'ask', arguments: '{}' },
    ],
  },
  { type: 'harness.approval.requested', toolCallId: 'c1', toolName: 'pay', at: 1 },
  { type: 'harness.approval.decided', toolCallId: 'c1', approved: true, at: 2 },
  { type: 'harness.step.started', toolCallId: 'c1', name: 'charge', attempt: 1, at: 2 },
  {
    type: 'harness.step.failed',
    toolCallId: 'c1',
    name: 'charge',
    attempt: 1,
    error: 'boom',
    timedOut: false,
    final: false,
    at: 2,
    retryAt: 3,
  },
  { type: 'harness.step', toolCallId: 'c1', name: 'charge', value: { id: 'ch_1' } },
  { type: 'harness.sleep', toolCallId: 'c1', name: 'cool', wakeAt: 50 },
  { type: 'harness.tool.result', toolCallId: 'c1', toolName: 'pay', ok: true, result: 'paid', cut: false },
  { type: 'harness.ask', toolCallId: 'c:2', name: 'which:one', message: 'Which?', schema: { type: 'string' } },
  { type: 'harness.parked', toolCallId: 'c:2', reason: 'ask', until: null, notStarted: [] },
  { type: 'harness.step', toolCallId: 'c:2', name: 'first', value: 1 },
]
const fold = (list: LogRecord[]) => foldLog(list.map((record, i) => ({ seq: i + 1, record })))

describe("a call's journal", () => {
  it('holds the call, its steps, sleeps, question, approval, wait and result in one place', () => {
    const state = fold(records)
    expect([...state.calls.keys()]).toEqual(['c1', 'c:2'])
    const settled = state.calls.get('c1')
    expect(settled?.call).toMatchObject({ name: 'pay', turnId: 't1' })
    expect(settled?.approval?.decision?.approved).toBe(true)
    expect(settled?.result?.result).toBe('paid')
    // A settled call never reads its steps again: the journal dropped them.
    expect(settled?.steps).toBeUndefined()
    expect(settled?.failures).toBeUndefined()
    expect(settled?.starts).toBeUndefined()
    expect(settled?.sleeps).toBeUndefined()
    const waiting = state.calls.get('c:2')
    expect(waiting?.parked?.reason).toBe('ask')
    expect(waiting?.questions?.get('which:one')?.ask.message).toBe('Which?')
    expect(waiting?.steps?.get('first')).toEqual({ value: 1 })
  })

  it('is what the per-call maps of the state show, lookups and walks alike', () => {
    const state = fold(records.slice(0, 9))
    expect(state.steps.get('c1')?.get('charge')).toEqual({ value: { id: 'ch_1' } })
    expect(state.stepFailures.get('c1')?.get('charge')?.attempts).toBe(1)
    expect(state.stepStarts.get('c1')?.get('charge')).toBe(1)
    expect(state.sleeps.get('c1')?.get('cool')).toBe(50)
    expect(state.approvals.get('c1')?.decision?.approved).toBe(true)
    expect([...state.toolCalls.keys()]).toEqual(['c1', 'c:2'])
    expect(state.results.size).toBe(0)
    const later = fold(records)
    // A question id is `${toolCallId}:${name}`, and either part may hold a colon.
    expect(later.questions.get('c:2:which:one')?.ask.name).toBe('which:one')
    expect(later.questions.has('c:2:which')).toBe(false)
    expect([...later.questions.keys()]).toEqual(['c:2:which:one'])
    expect([...later.results.keys()]).toEqual(['c1'])
    expect([...later.parked.keys()]).toEqual(['c:2'])
    expect(later.steps.size).toBe(1)
  })

  it('is read-only outside the fold: a view refuses a change, with a code', () => {
    const state = fold(records)
    const steps = state.steps as Map<string, unknown>
    expect(() => steps.set('c9', new Map())).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(() => (state.closedCalls as Set<string>).add('c9')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(state.steps.get('c9')).toBeUndefined()
  })

  it("ends a call's wait with its turn, and closes a call the turn left without a result", () => {
    const state = fold([...records, { type: 'harness.turn.cancelled', turnId: 't1', at: 9, reason: 'stop' }])
    expect(state.calls.get('c:2')?.parked).toBeUndefined()
    expect(state.calls.get('c:2')?.closed).toBe(true)
    expect([...state.closedCalls]).toEqual(['c:2'])
    expect(state.parked.size).toBe(0)
  })
})
