/**
 * `node dist/src/memory-crash.js <folder>`: the memory store, crashed in process with the
 * testing helpers (the store hangs like a killed process right after the charge step
 * lands), then a second host on the same data resumes the turn. Prints one JSON line.
 */
import { join } from 'node:path'
import { createHost } from '@tanstack/ai-harness'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { crashable, createManualClock, drain, runUntilCrash } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { fileBilling } from './billing.js'
import { checkoutHarness, report } from './checkout.js'

const billing = fileBilling(join(process.argv[2] ?? '.', 'memory-ledger.jsonl'))
const harness = checkoutHarness(billing)
const data = createMemoryData()
const clock = createManualClock()
const leaseMs = 30_000

const isChargeStep = (records: readonly LogRecord[]) =>
  records.some((r) => r.type === 'harness.step' && String(r.name).startsWith('charge:'))
const first = crashable(memoryStore({ data, clock }))
first.crashOnAppend(isChargeStep, 'after')
const dying = await createHost({ store: first, harnesses: harness, clock, leaseMs, hostId: 'host-1' }).open({ sessionId: 'order-o1' })
await runUntilCrash(first, dying.send('Check out order o1'))
const chargesAtCrash = billing.lines().filter((l) => l.op === 'charge').length

clock.advance(leaseMs + 1) // the dead host's lease runs out
const host = createHost({ store: memoryStore({ data, clock }), harnesses: harness, clock, leaseMs, hostId: 'host-2' })
const session = await host.open({ sessionId: 'order-o1' })
const needsRecovery = session.needsRecovery
await drain(session.resume())
const results = (await session.entries()).filter((e) => e.record.type === 'harness.tool.result').map((e) => e.record.result)
await session.close()
console.log(report(billing, { chargesAtCrash, needsRecovery, results }))
// The crashed host's timers (its lease renewal) hang on, as in a killed process: leave.
process.exit(0)
