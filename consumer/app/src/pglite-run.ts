/**
 * `node dist/src/pglite-run.js <folder> start|resume`: the checkout session on PGlite in
 * `<folder>/pglite`. `start` prints `charged` once the charge step is in the log and then
 * waits, to be killed with SIGKILL; `resume` opens the same database in a new process,
 * resumes the cut turn and prints one JSON line.
 */
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { createHost, isHarnessError, type Session } from '@tanstack/ai-harness'
import { drain } from '@tanstack/ai-harness/testing'
import { postgresStore } from '@tanstack/ai-harness-postgres'
import { fileBilling } from './billing.js'
import { checkoutHarness, report } from './checkout.js'

const [folder = '.', mode = 'start'] = process.argv.slice(2)
const billing = fileBilling(join(folder, 'pglite-ledger.jsonl'))
const store = postgresStore({ client: new PGlite(join(folder, 'pglite')), closeClient: true })
await store.migrate()

const harness = checkoutHarness(billing, {
  afterCharge: async () => {
    if (mode !== 'start') return
    console.log('charged')
    await new Promise(() => {}) // the parent kills this process here
  },
})
// A short lease, so the new process gets the session soon after the old one died (at
// once, where the store lets the same host id take its own lease back).
const host = createHost({ store, harnesses: harness, hostId: 'checkout-host', leaseMs: 2_000 })
const session = await openWhenFree()
if (mode === 'start') {
  await drain(session.send('Check out order o1'))
} else {
  const needsRecovery = session.needsRecovery
  await drain(session.resume())
  const results = (await session.entries()).filter((e) => e.record.type === 'harness.tool.result').map((e) => e.record.result)
  await session.close()
  await store.close()
  console.log(report(billing, { needsRecovery, results }))
}

async function openWhenFree(): Promise<Session> {
  for (let tries = 0; ; tries++) {
    try {
      return await host.open({ sessionId: 'order-o1' })
    } catch (error) {
      if (!isHarnessError(error, 'LEASE_HELD') || tries >= 60) throw error
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
}
