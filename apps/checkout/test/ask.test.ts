import { spawn } from 'node:child_process'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, CLI, runCli, tempDataDir } from './support/cli.js'
import { count, readLedgers } from './support/ledger.js'

describe('--ask: the checkout asks the customer to confirm the amount', () => {
  const cleanups: Array<() => void> = []
  beforeAll(assertBuilt)
  afterEach(() => {
    for (const remove of cleanups.splice(0)) remove()
  })

  it('--answer yes on PGlite: the asking process parks, the answer is logged, the crash story runs after it, one charge and one invoice', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--ask', '--answer', 'yes', '--data-dir', data.dir, '--json'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain('the checkout asks the customer to confirm the amount')
    expect(run.stderr).toContain('question: Charge 42.00 EUR for order 42?')
    const report = JSON.parse(run.stdout) as {
      ok: boolean
      story: { crash?: { point: string } }
      entries: Array<{ record: { type: string; answer?: unknown } }>
    }
    expect(report.ok).toBe(true)
    expect(report.story.crash?.point).toBe('charge-logged')
    const types = report.entries.map((e) => e.record.type)
    expect(types.indexOf('harness.ask')).toBeLessThan(types.indexOf('harness.answer'))
    expect(types.indexOf('harness.answer')).toBeLessThan(types.indexOf('harness.step'))
    expect(report.entries.find((e) => e.record.type === 'harness.answer')?.record.answer).toEqual({ amount: 42 })
    const ledger = readLedgers(data.dir)
    expect([count(ledger, 'charge'), count(ledger, 'invoice')]).toEqual([1, 1])
  })

  it('an answer with another amount charges nothing, and the run says so', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--ask', '--answer', '{"amount":41}', '--store', 'memory', '--data-dir', data.dir, '--crash', 'none'])
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('Result: FAILED')
    expect(count(readLedgers(data.dir), 'charge')).toBe(0)
  })

  it('bad --answer or --answer without --ask is a usage error (exit 2), before anything runs', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    for (const args of [
      ['--ask', '--answer', '{nope'],
      ['--answer', 'yes'],
    ]) {
      const run = await runCli([...args, '--store', 'memory', '--data-dir', data.dir])
      expect([args.join(' '), run.code]).toEqual([args.join(' '), 2])
    }
    expect(readLedgers(data.dir)).toEqual([])
  })

  it('without --answer it prints the inspector URL and waits; an answer through the inspector API lets it finish', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const child = spawn(process.execPath, [CLI, '--ask', '--store', 'memory', '--data-dir', data.dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const url = await new Promise<URL>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
        const found = /answer it in the inspector: (\S+)/.exec(stderr)
        if (found) resolve(new URL(found[1]!))
      })
      child.on('close', () => reject(new Error(`the program ended without printing the inspector URL:\n${stderr}`)))
    })
    const hash = new URLSearchParams(url.hash.slice(1))
    const auth = { authorization: `Bearer ${hash.get('token')}` }
    const sessionId = hash.get('session')!
    const view = (await (await fetch(new URL(`/api/sessions/${encodeURIComponent(sessionId)}`, url), { headers: auth })).json()) as {
      status: string
      parked: unknown
      questions: Array<{ questionId: string }>
    }
    expect([view.status, view.parked]).toEqual(['parked', { reason: 'ask', until: null }])
    const answered = await fetch(new URL(`/api/sessions/${encodeURIComponent(sessionId)}/answer`, url), {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ questionId: view.questions[0]!.questionId, answer: { amount: 42 } }),
    })
    expect(answered.status).toBe(200)
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('Result: OK, exactly one charge and one invoice per order')
  })
})
