/**
 * What each page says its code does, checked on the module's exports and on the fake
 * services, after the group ran. Keyed by `page#group`.
 */
import type { LogEntry } from '@tanstack/ai-harness/store'
import { expect } from 'vitest'
import type { Services } from './support/services.js'

export type PageCheck = (run: { module: Record<string, unknown>; services: Services }) => void | Promise<void>

const recordsOf = (log: unknown, type: string) => (log as LogEntry[]).map((e) => e.record).filter((r) => r.type === type)

export const checks: Record<string, PageCheck> = {
  'behind-a-web-app.md#route': ({ module }) => {
    expect(module.runId).toBe('user-1:chat/input/prompt-1')
    expect(module.seenOnce).toBe(true)
    expect(module.turns).toBe(1)
  },
  'behind-a-web-app.md#client': ({ module }) => {
    expect(module.sent).toEqual(['user: Hi', 'assistant: Hello from the store.'])
    expect(module.afterReload).toEqual(module.sent)
  },
  'durable-tools.md#shop': ({ module, services: { billing } }) => {
    // The first order: one charge, one invoice, and the answer after the tool result.
    expect(module.firstAnswer).toBe('Paid; the invoice is on its way.')
    expect(recordsOf(module.firstLog, 'harness.step').map((r) => r.name)).toEqual(['charge:a1', 'invoice:ch_1'])
    expect(recordsOf(module.firstLog, 'harness.tool.result')).toMatchObject([
      { toolName: 'checkout', ok: true, result: { chargeId: 'ch_1' } },
    ])
    // The crashed order: the charge ran once (its step was logged), the invoice after the resume.
    expect(module.neededRecovery).toBe(true)
    expect(billing.calls.filter((c) => c.subject === 'b2').map((c) => c.op)).toEqual(['charge'])
    expect(billing.charges.map((c) => c.orderId)).toEqual(['a1', 'b2', 'c3'])
    expect(billing.invoices.map((i) => i.chargeId)).toEqual(['ch_1', 'ch_2', 'ch_3'])
    expect(recordsOf(module.recoveredLog, 'harness.tool.result')).toMatchObject([{ ok: true, result: { chargeId: 'ch_2' } }])
    expect(recordsOf(module.recoveredLog, 'harness.turn.finished')).toHaveLength(1)
    // Plain chat(): keys start with plain:, there is no log.
    expect(billing.charges.find((c) => c.orderId === 'c3')?.key).toMatch(/^plain:/)
  },

  'durable-tools.md#retries': ({ module }) => {
    // Card 4242: the first attempt timed out, the second charged once.
    expect(recordsOf(module.paidLog, 'harness.step.failed')).toMatchObject([
      { name: 'charge:4242', attempt: 1, timedOut: true, final: false },
    ])
    expect(recordsOf(module.paidLog, 'harness.tool.result')).toMatchObject([{ ok: true, result: { chargeId: 'ch_1' } }])
    // Card 4000: declined once, for good, and the tool told the model.
    expect(recordsOf(module.declinedLog, 'harness.step.failed')).toMatchObject([
      { name: 'charge:4000', attempt: 1, final: true, error: 'NonRetryableError: The card was declined.' },
    ])
    expect(recordsOf(module.declinedLog, 'harness.tool.result')).toMatchObject([
      {
        ok: true,
        result: { failed: 'The card was declined.' },
      },
    ])
    expect((module.gateway as { calls: number }).calls).toBe(3)
  },
  'side-effects-without-keys.md#mailer': ({ module }) => {
    expect(module.emailsSent).toBe(1)
    const log = module.log as LogEntry[]
    expect(recordsOf(log, 'harness.step.intent')).toMatchObject([{ name: 'send:ada@example.com', attempt: 1 }])
    // verify's verdict is a step of its own, then the step's value.
    expect(recordsOf(log, 'harness.step')).toMatchObject([
      { name: 'verify(send:ada@example.com)#1', value: { done: true, value: { id: 'msg_1' } } },
      { name: 'send:ada@example.com', value: { id: 'msg_1' } },
    ])
    expect(recordsOf(log, 'harness.tool.result')).toMatchObject([{ ok: true, result: { mailId: 'msg_1' } }])
  },
  'side-effects-without-keys.md#unknown': ({ module }) => {
    expect((module.gateway as { sent: number }).sent).toBe(1)
    expect(module.evidence).toContain('Step "text" (idempotency key sms-1:')
    expect(module.evidence).toContain('verify said "unknown"')
    const log = module.log as LogEntry[]
    expect(recordsOf(log, 'harness.tool.result')).toMatchObject([{ ok: true, result: { status: 'sent' } }])
    expect(recordsOf(log, 'harness.turn.finished')).toHaveLength(1)
  },
  'side-effects-without-keys.md#once': ({ module }) => {
    expect((module.imageModel as { billed: number }).billed).toBe(1)
    expect(recordsOf(module.log, 'harness.tool.result')).toMatchObject([
      { ok: true, result: { unknown: expect.stringContaining('may have run') } },
    ])
  },
  'side-effects-without-keys.md#undo': ({ module }) => {
    expect((module.bank as { refunded: string[] }).refunded).toEqual(['ch_o1', 'ch_o2'])
    expect(recordsOf(module.log, 'harness.tool.result')).toMatchObject([
      { ok: false, result: { error: 'The invoice service is down. The call was rolled back: "charge:o1" undone.' } },
    ])
    expect(recordsOf(module.log, 'harness.step').map((r) => r.name)).toEqual(['charge:o1', 'undo(charge:o1)'])
    expect(module.plainToolMessage).toContain('The call was rolled back: \\"charge:o2\\" undone.')
  },
  'waits.md#refunds': ({ module, services: { billing } }) => {
    expect(module.parkedFor).toBe('sleep')
    expect(module.wrongAnswer).toBe('ANSWER_INVALID')
    const log = module.finalLog as LogEntry[]
    expect(recordsOf(log, 'harness.sleep')).toHaveLength(1)
    expect(recordsOf(log, 'harness.ask')).toHaveLength(1)
    expect(recordsOf(log, 'harness.answer')).toMatchObject([{ answer: { approve: true } }])
    expect(recordsOf(log, 'harness.tool.result')).toMatchObject([{ ok: true, result: { refunded: true, refundId: 're_ch_42' } }])
    expect(recordsOf(log, 'harness.turn.finished')).toHaveLength(1)
    expect(billing.calls.map((c) => c.subject)).toEqual(['refund:ch_42'])
  },
  'waits.md#approvals': ({ module, services: { billing } }) => {
    expect(module.parkedFor).toBe('approval')
    expect(module.sameCall).toBe(true)
    expect(module.secondDecision).toBe('ALREADY_DECIDED')
    expect(module.resumed).toEqual(['ticket-9'])
    const log = module.approvedLog as LogEntry[]
    expect(recordsOf(log, 'harness.approval.requested')).toHaveLength(1)
    expect(recordsOf(log, 'harness.approval.decided')).toMatchObject([{ approved: true, reason: 'checked the order' }])
    expect(recordsOf(log, 'harness.tool.result')).toMatchObject([{ ok: true, result: { refundId: 're_ch_77' } }])
    expect(recordsOf(log, 'harness.turn.finished')).toHaveLength(1)
    expect(billing.calls.map((c) => c.subject)).toEqual(['refund:ch_77'])
  },
  'sessions-hosts-workers.md#leases': ({ module }) => {
    expect(module.secondOpen).toBe('LEASE_HELD')
    expect(module.seenByWeb2).toBeGreaterThan(4)
  },
  'sessions-hosts-workers.md#recovery': ({ module }) => {
    expect(module.opened).toBe(1)
    const log = module.recoveredLog as LogEntry[]
    expect(recordsOf(log, 'harness.turn.resumed')).toHaveLength(1)
    expect(recordsOf(log, 'harness.step').map((r) => String(r.name).split(':')[0])).toEqual(['open', 'notify'])
    expect(recordsOf(log, 'harness.tool.result')).toMatchObject([{ ok: true }])
  },
  'sessions-hosts-workers.md#handoff': ({ module }) => {
    expect(module.streamEnd).toMatchObject({ code: 'LEASE_LOST' })
    expect(module.stepsBeforeWorker).toBe(1)
    expect(module.resumed).toEqual(['customer-56'])
    const log = module.handedOffLog as LogEntry[]
    expect(recordsOf(log, 'harness.step').map((r) => String(r.name).split(':')[0])).toEqual(['open', 'notify'])
    expect(recordsOf(log, 'harness.turn.finished')).toHaveLength(1)
  },
  'sessions-hosts-workers.md#agents': ({ module }) => {
    expect(module.agentResult).toBe('Ticket filed.')
    expect(recordsOf(module.childLog, 'harness.tool.result')).toMatchObject([{ toolName: 'file_ticket', ok: true }])
  },
  'resumable-streams.md#route': ({ module }) => {
    type Event = { id: string; chunk: { type: string; delta?: string } }
    const before = module.before as Event[]
    const after = module.after as Event[]
    expect(before).toHaveLength(2)
    const all = [...before, ...after]
    expect(new Set(all.map((e) => e.id)).size, 'each event once').toBe(all.length)
    expect(all.map((e) => e.chunk.delta ?? '').join('')).toBe('You said: hello')
    expect(all.at(-1)?.chunk.type).toBe('RUN_FINISHED')
    expect(String(module.runId)).not.toBe('')
    const onPglite = module.pgliteEvents as Event[]
    expect(onPglite.map((e) => e.chunk.delta ?? '').join('')).toBe('You said: on PGlite')
    expect(onPglite.at(-1)?.chunk.type).toBe('RUN_FINISHED')
  },
  'resumable-streams.md#locks': ({ module }) => {
    expect(module.sections).toEqual(['here in', 'here out', 'there in', 'there out'])
    const [a, b] = module.fences as number[]
    expect(b).toBeGreaterThan(a!)
  },
  'stores/memory.md#memory': ({ module }) => {
    expect(module.idle).toEqual([])
    expect((module.entries as LogEntry[]).at(-1)?.record.type).toBe('harness.turn.finished')
    expect(module.stored).toContain('Hello!')
  },
  'stores/postgres.md#pglite': ({ module }) => {
    expect(module.applied).toEqual([])
    expect(recordsOf(module.entries, 'harness.assistant').at(-1)).toMatchObject({ text: 'Noted.' })
  },
  'writing-a-store.md#map-store.test': ({ module }) => {
    // The log cases pass; the lease and wakeup cases are skipped with the page's reasons.
    expect(module.numPassedTests).toBeGreaterThan(20)
    expect(module.numPendingTests).toBeGreaterThan(0)
  },
}
