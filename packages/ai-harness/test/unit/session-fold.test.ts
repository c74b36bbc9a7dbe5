import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { foldLog, type JsonValue, readAndFold } from '../../src/log.js'
import type { LogRecord } from '../../src/store/index.js'

const turn = (n: number): LogRecord[] => [
  { type: 'harness.turn.started', turnId: `t${n}`, messages: [{ role: 'user', content: `go ${n}` }], at: n, host: 'h', fence: 1 },
  { type: 'harness.assistant', turnId: `t${n}`, text: '', toolCalls: [{ id: `c${n}`, name: 'tool', arguments: '{}' }] },
  { type: 'harness.step', toolCallId: `c${n}`, name: 'one', value: { n } },
  { type: 'harness.tool.result', toolCallId: `c${n}`, toolName: 'tool', ok: true, result: { n }, cut: false },
  { type: 'harness.assistant', turnId: `t${n}`, text: `done ${n}`, toolCalls: [] },
  { type: 'harness.turn.finished', turnId: `t${n}`, at: n },
]

describe('folding a session log', () => {
  it('page by page gives the same state as folding the whole log at once', async () => {
    const store = memoryStore()
    const records: LogRecord[] = [{ type: 'harness.session.opened', harness: 'h', at: 0, parent: null }]
    for (let n = 0; n < 7; n++) records.push(...turn(n))
    await store.append('s', 1, records)
    const paged = await readAndFold(store, 's', 4)
    const whole = foldLog(await store.read('s'))
    expect(paged.nextSeq).toBe(records.length + 1)
    expect(paged.messages).toEqual(whole.messages)
    expect(paged.messages).toHaveLength(7 * 4)
    expect(paged.openTurn).toBeUndefined()
  })

  it('reads a long log in pages that double from 1000 up to 8000, and ends on an empty page', async () => {
    const store = memoryStore()
    const records: LogRecord[] = [{ type: 'harness.session.opened', harness: 'h', at: 0, parent: null }]
    for (let n = 0; n < 5000; n++) records.push(...turn(n))
    expect(records).toHaveLength(30_001)
    for (let at = 0; at < records.length; at += 1000) await store.append('s', at + 1, records.slice(at, at + 1000))
    const limits: Array<number | undefined> = []
    const read = store.read.bind(store)
    const counted = Object.assign(Object.create(store), {
      read: (id: string, options?: { after?: number; limit?: number }) => {
        limits.push(options?.limit)
        return read(id, options)
      },
    })
    const state = await readAndFold(counted, 's')
    expect(state.nextSeq).toBe(records.length + 1)
    // 30 001 records: 1000 + 2000 + 4000 + 8000 + 8000 + 7001, then the empty page.
    expect(limits).toEqual([1000, 2000, 4000, 8000, 8000, 8000, 8000])
    limits.length = 0
    await readAndFold(counted, 's', 1000, 1000)
    // Without growth: 31 pages and the empty one.
    expect(limits).toHaveLength(32)
  })

  it('keeps no steps of settled calls, so memory does not grow with finished work', async () => {
    const store = memoryStore()
    await store.append('s', 1, [{ type: 'harness.session.opened', harness: 'h', at: 0, parent: null }, ...turn(1), ...turn(2).slice(0, 3)])
    const state = await readAndFold(store, 's')
    expect([...state.steps.keys()]).toEqual(['c2'])
    expect(state.openTurn?.turnId).toBe('t2')
  })

  it('gives a call of an ended turn that has no result a closing tool message, so it never looks pending', () => {
    const records = turn(1).filter((r) => r.type !== 'harness.tool.result')
    const state = foldLog(records.map((record, i) => ({ seq: i + 1, record })))
    expect(state.messages.filter((m) => m.role === 'tool')).toHaveLength(1)
    expect(state.closedCalls.has('c1')).toBe(true)
  })

  it('counts the failed attempts of a step without a value (the highest attempt logged), and forgets them once the call settles', () => {
    const failed = (attempt: number, final: boolean): LogRecord => ({
      type: 'harness.step.failed',
      toolCallId: 'c1',
      name: 'one',
      attempt,
      error: 'boom',
      timedOut: false,
      final,
      at: attempt,
      ...(final ? {} : { retryAt: attempt + 10 }),
    })
    const [started, assistant, step, result] = turn(1)
    const open = foldLog([started!, assistant!, failed(1, false), failed(2, false)].map((record, i) => ({ seq: i + 1, record })))
    expect(open.stepFailures.get('c1')?.get('one')).toMatchObject({ attempts: 2, last: { attempt: 2, retryAt: 12 } })
    const settled = foldLog([started!, assistant!, failed(1, false), step!, result!].map((record, i) => ({ seq: i + 1, record })))
    expect(settled.stepFailures.size).toBe(0)
  })

  it("keeps a turn's logged trace context and its driving host; a malformed trace is ignored, never trusted", () => {
    const [started] = turn(1)
    const trace = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), flags: 1 }
    const traced = foldLog([{ seq: 1, record: { ...started!, trace } }])
    expect(traced.openTurn).toMatchObject({ trace, host: 'h' })
    const malformed: JsonValue[] = [
      null,
      'x',
      { traceId: 'A'.repeat(32), spanId: 'b'.repeat(16) },
      { traceId: 'a'.repeat(31), spanId: 'b'.repeat(16) },
      { traceId: 'a'.repeat(32) },
    ]
    for (const bad of malformed) {
      expect(foldLog([{ seq: 1, record: { ...started!, trace: bad } }]).openTurn?.trace, JSON.stringify(bad)).toBeUndefined()
    }
    const resumed = foldLog([
      { seq: 1, record: started! },
      { seq: 2, record: { type: 'harness.turn.resumed', turnId: 't1', at: 2, host: 'worker-2', fence: 2 } },
    ])
    expect(resumed.openTurn?.host).toBe('worker-2')
  })

  it('keeps interleaved calls apart: steps of two calls of one batch in turn land in their own journals', () => {
    const records: LogRecord[] = [
      { type: 'harness.session.opened', harness: 'h', at: 0, parent: null },
      { type: 'harness.turn.started', turnId: 't', messages: [{ role: 'user', content: 'go' }], at: 1 },
      {
        type: 'harness.assistant',
        turnId: 't',
        text: '',
        toolCalls: [
          { id: 'a', name: 'tool', arguments: '{}' },
          { id: 'b', name: 'tool', arguments: '{"x":1}' },
        ],
      },
      { type: 'harness.step', toolCallId: 'a', name: 'one', value: 1 },
      { type: 'harness.step', toolCallId: 'b', name: 'one', value: 2 },
      { type: 'harness.step', toolCallId: 'a', name: 'two', value: 3 },
      { type: 'harness.tool.result', toolCallId: 'b', toolName: 'tool', ok: true, result: 'b done', cut: false },
      { type: 'harness.step', toolCallId: 'a', name: 'three', value: 4 },
    ]
    const state = foldLog(records.map((record, i) => ({ seq: i + 1, record })))
    expect([...(state.steps.get('a') ?? new Map())]).toEqual([
      ['one', { value: 1 }],
      ['two', { value: 3 }],
      ['three', { value: 4 }],
    ])
    // b settled: its steps are dropped, its result and call stay.
    expect(state.steps.get('b')).toBeUndefined()
    expect(state.results.get('b')?.result).toBe('b done')
    expect(state.toolCalls.get('b')).toEqual({ id: 'b', name: 'tool', arguments: '{"x":1}', turnId: 't' })
    expect(state.openTurn?.callIds).toEqual(['a', 'b'])
    expect(state.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'b', content: 'b done' })
  })

  it('folds only its own record types: app records named like Object properties change nothing but the next seq', () => {
    const records: LogRecord[] = [
      { type: 'harness.session.opened', harness: 'h', at: 0, parent: null },
      { type: 'constructor' },
      { type: '__proto__' },
      { type: 'toString' },
      { type: 'hasOwnProperty', turnId: 'x' },
    ]
    const state = foldLog(records.map((record, i) => ({ seq: i + 1, record })))
    expect(state.nextSeq).toBe(6)
    expect(state.harness).toBe('h')
    expect(state.messages).toEqual([])
    expect(state.calls.size).toBe(0)
  })
})
