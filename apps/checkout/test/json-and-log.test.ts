import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, hasStackTrace, runCli, tempDataDir } from './support/cli.js'

describe('--json and the log command', () => {
  const cleanups: Array<() => void> = []
  beforeAll(assertBuilt)
  afterEach(() => {
    for (const remove of cleanups.splice(0)) remove()
  })

  it('--json prints one JSON document with the verdict, the story, the ledger and the log; log prints the same session', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--data-dir', data.dir, '--session', 'json-session', '--json'])
    expect(run.code, run.stderr).toBe(0)
    // Progress goes to stderr; stdout is exactly one document.
    expect(run.stderr).toContain('checkout: process 1')
    const report = JSON.parse(run.stdout)
    expect(report).toMatchObject({
      ok: true,
      sessionId: 'json-session',
      store: { kind: 'pglite' },
      model: 'scripted (no network)',
      orders: [{ orderId: '42', charges: 1, invoices: 1 }],
      counts: { charges: 1, invoices: 1, emails: 1, duplicatesRefused: { charges: 0, invoices: 0, emails: 0, total: 0 } },
      problems: [],
      story: { crash: { point: 'charge-logged', signal: 'SIGKILL', simulated: false, lastSeq: 4 }, neededRecovery: true },
    })
    expect(report.story.resumedBy).not.toBe(report.story.placedBy)
    expect(typeof report.durationMs).toBe('number')
    expect(report.ledger.map((e: { op: string }) => e.op)).toEqual(['charge', 'invoice', 'send'])
    const types = report.entries.map((e: { record: { type: string } }) => e.record.type)
    expect(types[0]).toBe('harness.session.opened')
    expect(types.at(-1)).toBe('harness.turn.finished')
    expect(report.entries.map((e: { seq: number }) => e.seq)).toEqual(types.map((_: string, i: number) => i + 1))

    // log: the timeline, read back by a new process.
    const log = await runCli(['log', 'json-session', '--data-dir', data.dir])
    expect(log.code, log.stderr).toBe(0)
    expect(log.stdout).toContain(`Session json-session: ${types.length} records`)
    for (const label of [
      'session.opened',
      'turn.started',
      'charge:42 =',
      'invoice:ch_',
      'tool.result     checkout ok',
      'notify ok',
      'turn.finished',
    ]) {
      expect(log.stdout).toContain(label)
    }

    // log --json: the raw records, equal to what the run saw.
    const raw = await runCli(['log', 'json-session', '--data-dir', data.dir, '--json'])
    expect(raw.code, raw.stderr).toBe(0)
    const doc = JSON.parse(raw.stdout)
    expect(doc.sessionId).toBe('json-session')
    expect(doc.entries).toEqual(report.entries)

    // Placing the order again in the same session would charge again: refused as bad usage.
    const again = await runCli(['--data-dir', data.dir, '--session', 'json-session', '--json'])
    expect(again.code).toBe(2)
    expect(again.stderr).toContain('Session json-session already exists')
    expect(again.stderr).not.toSatisfy(hasStackTrace)
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: false, error: { exitCode: 2 } })
  })

  it('log of an unknown session exits 4 with a clear message', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['log', 'no-such-session', '--data-dir', data.dir])
    expect(run.code).toBe(4)
    expect(run.stderr).toContain('No session "no-such-session"')
    expect(run.stderr).not.toSatisfy(hasStackTrace)
  })
})
