import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, hasStackTrace, runCli, tempDataDir } from './support/cli.js'
import { count, isAlive, readLedgers } from './support/ledger.js'

describe('the default run: a real SIGKILL between the charge and the invoice', () => {
  const cleanups: Array<() => void> = []
  beforeAll(assertBuilt)
  afterEach(() => {
    for (const remove of cleanups.splice(0)) remove()
  })

  it('kills process 1 after the charge step is logged, resumes in process 2, and ends with one charge and one invoice', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--data-dir', data.dir])

    expect(run.stderr).not.toSatisfy(hasStackTrace)
    expect(run.code, run.stderr).toBe(0)

    // What really happened, from the services' own fsync'd ledgers.
    const ledger = readLedgers(data.dir)
    expect(count(ledger, 'charge')).toBe(1)
    expect(count(ledger, 'invoice')).toBe(1)
    expect(count(ledger, 'send')).toBe(1)
    const charge = ledger.find((l) => l.op === 'charge')!
    const invoice = ledger.find((l) => l.op === 'invoice')!
    // The charge and the invoice were made by two different processes: the first one died in between.
    expect(charge.pid).not.toBe(invoice.pid)
    expect(isAlive(charge.pid)).toBe(false)
    expect(invoice.detail.chargeId).toBe(charge.detail.chargeId)

    // The child reported its crash point, the parent killed it, a fresh child recovered.
    const killed = new RegExp(`killed process 1 \\(pid ${charge.pid}\\) with SIGKILL: step charge:42 is in the log`)
    expect(run.stderr).toMatch(killed)
    expect(run.stderr).toMatch(/the last turn was cut: resuming it by the replay rules/)

    // The printed summary.
    expect(run.stdout).toContain('Result: OK, exactly one charge and one invoice per order')
    expect(run.stdout).toMatch(/charges made\s+1\n/)
    expect(run.stdout).toMatch(/invoices sent\s+1\n/)
    expect(run.stdout).toMatch(/emails sent\s+1\n/)
    expect(run.stdout).toMatch(/duplicates refused\s+0\n/)
    expect(run.stdout).toContain(`order 42: 1 charge (${charge.detail.chargeId}), 1 invoice`)
    expect(run.stdout).toContain(`it was killed with SIGKILL`)
    // PGlite proves process 1 dead: process 2 waited for no lease, and the story says how long the takeover took.
    expect(run.stdout).toMatch(
      /takeover: the session was open \d+ ms after the kill, process 2's start included; no wait for process 1's lease/,
    )
    expect(run.stderr).not.toMatch(/waiting for the lease to run out/)
    // The timeline marks the kill right after the charge step, before the invoice step.
    const timeline = run.stdout.slice(run.stdout.indexOf('Session log:'))
    const stepCharge = timeline.indexOf('charge:42 =')
    const kill = timeline.indexOf(`process 1 (pid ${charge.pid}) killed with SIGKILL here`)
    const stepInvoice = timeline.indexOf(`invoice:${charge.detail.chargeId}`)
    expect(stepCharge).toBeGreaterThan(-1)
    expect(kill).toBeGreaterThan(stepCharge)
    expect(stepInvoice).toBeGreaterThan(kill)
    expect(timeline).toMatch(/turn\.finished/)
  })

  it('a kill after billing charged but before the step was logged: the replay is refused by billing, still one charge per order', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--data-dir', data.dir, '--crash', 'charge-unlogged', '--order', '7', '--order', '8'])
    expect(run.code, run.stderr).toBe(0)

    const ledger = readLedgers(data.dir)
    expect(count(ledger, 'charge')).toBe(2)
    expect(count(ledger, 'invoice')).toBe(2)
    // The second process ran charge:7 again with the same idempotency key; billing refused it.
    expect(count(ledger, 'charge', 'refused')).toBe(1)
    const [done, refused] = ['done', 'refused'].map(
      (outcome) => ledger.find((l) => l.op === 'charge' && l.outcome === outcome && l.detail.orderId === '7')!,
    )
    expect(refused!.key).toBe(done!.key)
    expect(refused!.pid).not.toBe(done!.pid)

    expect(run.stdout).toMatch(/duplicates refused\s+1 \(charges 1, invoices 0, emails 0\)/)
    expect(run.stdout).toMatch(/order 7: 1 charge \(ch_\w+\), 1 invoice/)
    expect(run.stdout).toMatch(/order 8: 1 charge \(ch_\w+\), 1 invoice/)
  })

  it('a kill after the email step is in the log: the resumed notify returns the stored message, no second email goes out', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--data-dir', data.dir, '--crash', 'email-logged'])
    expect(run.code, run.stderr).toBe(0)

    const ledger = readLedgers(data.dir)
    expect(count(ledger, 'charge')).toBe(1)
    expect(count(ledger, 'invoice')).toBe(1)
    expect(count(ledger, 'send')).toBe(1)
    expect(run.stdout).toMatch(/got the receipt \(msg_\w+\)/)
  })

  it('a kill after the mailer sent but before the step was logged: the mailer takes no key, so verify finds the email in its outbox and nothing is sent again', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--data-dir', data.dir, '--crash', 'email-unlogged'])
    expect(run.code, run.stderr).toBe(0)

    const ledger = readLedgers(data.dir)
    const sent = ledger.filter((l) => l.op === 'send')
    expect(sent).toHaveLength(1)
    expect(run.stderr).toContain(`verify: ${sent[0]!.detail.mailId} is in the mailer's outbox; not sending it again`)
    // The email went out in process 1; process 2 stored it from the outbox.
    expect(run.stdout).toMatch(/step\.intent\s+send:ada@example\.com attempt 1/)
    expect(run.stdout).toContain(`got the receipt (${sent[0]!.detail.mailId})`)
  })

  it('an invoice that fails rolls the charge back: the undo of the charge step refunds it once, also across the crash', async () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    const run = await runCli(['--data-dir', data.dir, '--fail-invoice'])
    expect(run.code, run.stderr).toBe(0)

    const ledger = readLedgers(data.dir)
    expect(count(ledger, 'charge')).toBe(1)
    expect(count(ledger, 'invoice')).toBe(0)
    expect(count(ledger, 'refund')).toBe(1)
    expect(ledger.find((l) => l.op === 'refund')!.detail.chargeId).toBe(ledger.find((l) => l.op === 'charge')!.detail.chargeId)
    expect(run.stdout).toContain('Result: OK, the invoice failed and each charge was refunded once (undo)')
    expect(run.stdout).toContain('The call was rolled back: "charge:42" undone.')
  })
})
