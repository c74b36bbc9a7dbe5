import { describe, expect, it } from 'vitest'
import { foldLog } from '../../src/log.js'
import { cutAtResume } from '../../src/runtime/replay-rules.js'
import type { LogRecord } from '../../src/store/index.js'

// The replay rule (`cutAtResume`) as a truth table: each row is what a log holds after a
// turn's batch of two calls (c1, c2) was logged, and which of them a crash cut.

const opened: LogRecord = { type: 'harness.session.opened', harness: 'h', at: 0, parent: null }
const started: LogRecord = {
  type: 'harness.turn.started',
  turnId: 't1',
  messages: [{ role: 'user', content: 'go' }],
  at: 1,
  host: 'h1',
  fence: 1,
}
const batch: LogRecord = {
  type: 'harness.assistant',
  turnId: 't1',
  text: '',
  toolCalls: [
    { id: 'c1', name: 'tool', arguments: '{}' },
    { id: 'c2', name: 'tool', arguments: '{}' },
  ],
}
const resumed: LogRecord = { type: 'harness.turn.resumed', turnId: 't1', at: 5, host: 'h2', fence: 2 }
const result = (toolCallId: string): LogRecord => ({
  type: 'harness.tool.result',
  toolCallId,
  toolName: 'tool',
  ok: true,
  result: 'ok',
  cut: false,
})
const parked = (toolCallId: string, reason: string, notStarted: string[]): LogRecord => ({
  type: 'harness.parked',
  toolCallId,
  reason,
  until: reason === 'sleep' ? 100 : null,
  notStarted,
})
const requested: LogRecord = { type: 'harness.approval.requested', toolCallId: 'c1', toolName: 'tool', at: 2 }
const decided = (approved: boolean): LogRecord => ({ type: 'harness.approval.decided', toolCallId: 'c1', approved, at: 3 })
const ask: LogRecord = { type: 'harness.ask', toolCallId: 'c1', name: 'q', message: 'Which?', schema: { type: 'string' } }
const answer: LogRecord = { type: 'harness.answer', toolCallId: 'c1', name: 'q', answer: 'this', at: 4 }

/** Each row: the records after `opened`, `started` and the batch (or instead of the batch, with `log`), and the calls cut. */
const TABLE: Array<{ row: string; after?: LogRecord[]; log?: LogRecord[]; cut: string[] }> = [
  { row: 'no host took the turn over: the first run still owns its calls', after: [], cut: [] },
  { row: 'a host took over: every call without a result is cut', after: [resumed], cut: ['c1', 'c2'] },
  { row: 'a call settled before the take-over is not cut', after: [result('c1'), resumed], cut: ['c2'] },
  { row: 'a call settled after the take-over is not cut', after: [resumed, result('c1')], cut: ['c2'] },
  { row: 'a call made after the last take-over is not cut', log: [opened, started, resumed, batch], cut: [] },
  { row: 'a sleep park keeps its call and the later calls of its batch', after: [parked('c1', 'sleep', ['c2']), resumed], cut: [] },
  { row: 'a question park keeps its call; a call it did not list is cut', after: [ask, parked('c1', 'ask', []), resumed], cut: ['c2'] },
  {
    row: 'an answered question park still waits until the call runs on',
    after: [ask, parked('c1', 'ask', ['c2']), answer, resumed],
    cut: [],
  },
  { row: 'an agent park keeps its call', after: [parked('c1', 'agent', ['c2']), resumed], cut: [] },
  {
    row: 'an approval without a decision keeps the whole batch',
    after: [requested, parked('c1', 'approval', ['c2']), resumed, resumed],
    cut: [],
  },
  {
    row: 'the take-over right after the decision acts on it: nothing of the batch ran',
    after: [requested, parked('c1', 'approval', ['c2']), decided(true), resumed],
    cut: [],
  },
  {
    row: 'a second take-over after an approval: the approved call and its batch may have run',
    after: [requested, parked('c1', 'approval', ['c2']), decided(true), resumed, resumed],
    cut: ['c1', 'c2'],
  },
  {
    row: 'a denied call is never cut; the rest of its batch is',
    after: [requested, parked('c1', 'approval', ['c2']), decided(false), resumed, resumed],
    cut: ['c2'],
  },
  {
    row: 'a take-over before the decision does not count as a run after it',
    after: [requested, parked('c1', 'approval', ['c2']), resumed, decided(true), resumed],
    cut: [],
  },
  {
    row: 'an ended turn has nothing to cut',
    after: [resumed, { type: 'harness.turn.finished', turnId: 't1', at: 9 }],
    cut: [],
  },
]

describe('the replay rule (cutAtResume)', () => {
  for (const { row, after, log, cut } of TABLE) {
    it(row, () => {
      const records = log ?? [opened, started, batch, ...(after ?? [])]
      const state = foldLog(records.map((record, i) => ({ seq: i + 1, record })))
      expect(['c1', 'c2'].filter((id) => cutAtResume(state, id))).toEqual(cut)
    })
  }
})
