import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { createHost, defineHarness, type HarnessStore } from '../../src/index.js'
import { readAndFold } from '../../src/log.js'
import { createManualClock, type LogRecord, readAll } from '../../src/store/index.js'
import { scriptedText } from '../../src/testing/index.js'
import { drain } from '../support/harness.js'

/** One finished turn of the harness's own records: six records. */
const turn = (n: number): LogRecord[] => [
  { type: 'harness.turn.started', turnId: `t${n}`, messages: [{ role: 'user', content: `go ${n}` }], at: n, host: 'h', fence: 1 },
  { type: 'harness.assistant', turnId: `t${n}`, text: '', toolCalls: [{ id: `c${n}`, name: 'tool', arguments: '{}' }] },
  { type: 'harness.step', toolCallId: `c${n}`, name: 'one', value: { n } },
  { type: 'harness.tool.result', toolCallId: `c${n}`, toolName: 'tool', ok: true, result: { n }, cut: false },
  { type: 'harness.assistant', turnId: `t${n}`, text: `done ${n}`, toolCalls: [] },
  { type: 'harness.turn.finished', turnId: `t${n}`, at: n },
]

/** A session log of 151 records: opened, then 25 finished turns. */
const LOG: LogRecord[] = [{ type: 'harness.session.opened', harness: 'pager', at: 0, parent: null }]
for (let n = 0; n < 25; n++) LOG.push(...turn(n))

/**
 * Stores that return short pages, as the paging rule allows: every page at most
 * `cap` entries, also when the reader asks for more or gives no limit.
 */
function shortPages(cap: number): HarnessStore {
  const store = memoryStore({ clock: createManualClock() })
  return { ...store, read: (logId, options = {}) => store.read(logId, { ...options, limit: Math.min(options.limit ?? cap, cap) }) }
}

describe('a store that returns short pages (only an empty page ends a log)', () => {
  for (const cap of [100, 7, 1]) {
    it(`readAll and readAndFold read all 151 records from pages of at most ${cap}`, async () => {
      const store = shortPages(cap)
      await store.append('s', 1, LOG)
      const all = await readAll(store, 's')
      expect(all.map((e) => e.seq)).toEqual(LOG.map((_, i) => i + 1))
      expect(all.map((e) => e.record)).toEqual(LOG)
      const state = await readAndFold(store, 's')
      expect(state.nextSeq).toBe(LOG.length + 1)
      expect(state.messages).toHaveLength(25 * 4)
    })
  }

  it('a host opens the session whole, with every turn, and appends after the last record', async () => {
    const store = shortPages(100)
    await store.append('s', 1, LOG)
    const harness = defineHarness({ name: 'pager', adapter: scriptedText(() => 'Hello again.') })
    const session = await createHost({ store, harnesses: harness }).open({ sessionId: 's' })
    expect(await session.entries()).toHaveLength(LOG.length)
    // The next turn lands right after seq 151: a host that had stopped at a short page would conflict here.
    await drain(session.send('once more'))
    const entries = await session.entries()
    expect(entries.length).toBeGreaterThan(LOG.length)
    expect(entries[LOG.length]!.record.type).toBe('harness.turn.started')
    await session.close()
  })
})
