import { describe, expect, it } from 'vitest'
import { WAITING_FOR_PERSON } from '../../src/contract/types.js'
import { foldLog } from '../../src/log.js'
import type { GuardedStore } from '../../src/runtime/store-boundary.js'
import { WakeupPolicy } from '../../src/runtime/wakeup-policy.js'
import type { LogRecord } from '../../src/store/index.js'

// The wakeup each park reason asks for, as a truth table: each feature gives its rule
// beside its records (sleep, ask, approval, agent), and the policy writes the one wakeup.

const SESSION = 's1'
const head: LogRecord[] = [
  { type: 'harness.session.opened', harness: 'h', at: 0, parent: null },
  { type: 'harness.turn.started', turnId: 't1', messages: [{ role: 'user', content: 'go' }], at: 1, host: 'h1', fence: 1 },
  { type: 'harness.assistant', turnId: 't1', text: '', toolCalls: [{ id: 'c1', name: 'tool', arguments: '{}' }] },
]
const parked = (reason: string, until: number | null = null): LogRecord => ({
  type: 'harness.parked',
  toolCallId: 'c1',
  reason,
  until,
  notStarted: [],
})
const asked: LogRecord = { type: 'harness.ask', toolCallId: 'c1', name: 'q', message: 'ok?', schema: { type: 'boolean' } }
const answered: LogRecord = { type: 'harness.answer', toolCallId: 'c1', name: 'q', answer: true, at: 3 }
const requested: LogRecord = { type: 'harness.approval.requested', toolCallId: 'c1', toolName: 'tool', at: 2 }
const decided: LogRecord = { type: 'harness.approval.decided', toolCallId: 'c1', approved: true, at: 3 }

function policyOver(records: LogRecord[], now: number) {
  const state = foldLog([...head, ...records].map((record, index) => ({ seq: index + 1, record })))
  const writes: string[] = []
  const store = {
    now: async () => now,
    read: async () => [],
    wakeups: {
      schedule: async (id: string, at: number) => void writes.push(`${id}@${at === WAITING_FOR_PERSON ? 'person' : at}`),
      cancel: async (id: string) => void writes.push(`${id} cancelled`),
    },
  } as unknown as GuardedStore
  const policy = new WakeupPolicy(store, SESSION, state, { now: () => now })
  return { policy, writes, parked: [...state.parked.values()][0]! }
}

type Row = [
  name: string,
  records: LogRecord[],
  parkedWrites: string[],
  waitsForPerson: boolean,
  stillWaiting: boolean,
  stillWrites: string[],
]

const rows: Row[] = [
  ['a sleep not yet due', [parked('sleep', 100)], ['s1@100'], false, true, ['s1@100']],
  ['a sleep that is due', [parked('sleep', 40)], ['s1@40'], false, false, []],
  ['a sleep without a wake time', [parked('sleep')], ['s1@person'], false, false, []],
  ['a question without an answer', [asked, parked('ask')], ['s1@person'], true, true, ['s1@person']],
  ['an answered question', [asked, parked('ask'), answered], ['s1@person'], false, false, []],
  ['an approval not decided', [requested, parked('approval')], ['s1@person'], true, true, ['s1@person']],
  ['a decided approval', [requested, parked('approval'), decided], ['s1@person'], false, false, []],
  ['a call that waits for its child agent', [parked('agent')], ['s1 cancelled'], false, false, []],
  ['a reason this build does not know', [parked('later')], ['s1@person'], false, false, []],
]

describe('wakeup rules, one per feature', () => {
  for (const [name, records, parkedWrites, person, still, stillWrites] of rows) {
    it(name, async () => {
      const atPark = policyOver(records, 50)
      await atPark.policy.parked(atPark.parked as never)
      expect(atPark.writes).toEqual(parkedWrites)
      const later = policyOver(records, 50)
      expect(later.policy.waitsForPerson()).toBe(person)
      expect(await later.policy.stillWaiting()).toBe(still)
      expect(later.writes).toEqual(stillWrites)
    })
  }
})
