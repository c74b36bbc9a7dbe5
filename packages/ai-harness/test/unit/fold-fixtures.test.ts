import { readFileSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { foldLog } from '../../src/log.js'
import type { LogEntry, LogRecord } from '../../src/store/index.js'

// Logs written by the runtime before the core reshape (issue #26): the memory store's logs
// of the step, wait, approval, recovery, retry, agent, orphan, answer, seed, secret and
// submit tests, captured once. Whatever the fold becomes, these logs must fold to the same
// state: a store keeps logs for years, and a new host must read what an old one wrote.
const LOGS = new URL('../fixtures/logs-before-26.json', import.meta.url)
const FOLDS = new URL('../fixtures/folds-before-26.json', import.meta.url)

/** The folded state as plain JSON: maps and sets as entries sorted by key, so the comparison does not hang on insertion order. */
function plain(value: unknown): unknown {
  if (value instanceof Map) {
    return [...value.entries()]
      .map(([k, v]) => [k, plain(v)])
      .sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0))
  }
  if (value instanceof Set) return [...value].map(plain).sort()
  if (Array.isArray(value)) return value.map(plain)
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key]
      if (v !== undefined) out[key] = plain(v)
    }
    return out
  }
  return value
}

const logs = JSON.parse(readFileSync(LOGS, 'utf8')) as Record<string, LogRecord[]>
const entries = (records: LogRecord[]): LogEntry[] => records.map((record, i) => ({ seq: i + 1, record }))

describe('logs written before the core reshape', () => {
  it('are many, and cover every record type the runtime writes to a session log', () => {
    const types = new Set(Object.values(logs).flatMap((records) => records.map((r) => r.type)))
    expect(Object.keys(logs).length).toBeGreaterThan(50)
    for (const type of [
      'harness.session.opened',
      'harness.turn.started',
      'harness.turn.resumed',
      'harness.turn.finished',
      'harness.turn.cancelled',
      'harness.assistant',
      'harness.tool.result',
      'harness.step',
      'harness.step.started',
      'harness.step.failed',
      'harness.sleep',
      'harness.ask',
      'harness.answer',
      'harness.answer.rejected',
      'harness.approval.requested',
      'harness.approval.decided',
      'harness.parked',
      'harness.secret.used',
    ]) {
      expect(types.has(type), type).toBe(true)
    }
  })

  it('fold to the same state as they did then, whole and in pages', () => {
    // A part of the state added since the fixtures were written must start empty on an old log; the rest must be as it was.
    const then = (state: ReturnType<typeof foldLog>) => {
      const { outcomes, ...rest } = plain(state) as Record<string, unknown>
      expect(outcomes).toEqual({ intents: [], probing: [], rollbacks: [] })
      return rest
    }
    const folds = Object.fromEntries(Object.entries(logs).map(([name, records]) => [name, then(foldLog(entries(records)))]))
    if (process.env.UPDATE_FOLD_FIXTURES === '1') writeFileSync(FOLDS, `${JSON.stringify(folds, null, 1)}\n`)
    const expected = JSON.parse(readFileSync(FOLDS, 'utf8')) as Record<string, unknown>
    expect(Object.keys(folds)).toEqual(Object.keys(expected))
    for (const name of Object.keys(expected)) expect(folds[name], name).toEqual(expected[name])
    // Folded in two parts (as a session reads a long log page by page), the state is the same.
    for (const [name, records] of Object.entries(logs)) {
      const all = entries(records)
      const half = Math.floor(all.length / 2)
      expect(then(foldLog(all.slice(half), foldLog(all.slice(0, half)))), name).toEqual(expected[name])
    }
  })
})
