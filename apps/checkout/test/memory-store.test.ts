import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, runCli, tempDataDir } from './support/cli.js'
import { count, readLedgers } from './support/ledger.js'

describe('--store memory', () => {
  const cleanups: Array<() => void> = []
  beforeAll(assertBuilt)
  afterEach(() => {
    for (const remove of cleanups.splice(0)) remove()
  })

  it('simulates the crash in one process (the log cannot outlive it) and still ends with one charge and one invoice', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--store', 'memory', '--data-dir', data.dir])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain('simulated in-process for the memory store')
    expect(run.stdout).toContain('a simulated crash: the memory store cannot outlive a process')
    expect(run.stdout).toContain('Result: OK, exactly one charge and one invoice per order')
    const ledger = readLedgers(data.dir)
    expect(count(ledger, 'charge')).toBe(1)
    expect(count(ledger, 'invoice')).toBe(1)
  })
})
