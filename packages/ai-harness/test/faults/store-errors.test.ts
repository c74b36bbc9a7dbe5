import { isHarnessError } from '@tanstack/ai-harness'
import { connectionReset, type StoreOperation } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { askHarness, faultWorld } from '../support/faults.js'
import { drain } from '../support/harness.js'

/** What `run` rejects with. */
async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('expected a failure')
}

const raw = [
  ['a dropped connection (ECONNRESET)', () => connectionReset()],
  ['a driver bug (TypeError)', () => new TypeError("Cannot read properties of undefined (reading 'rows')")],
  ['a thrown string', () => 'socket closed'],
] as const

describe('a store that fails with errors that are not harness errors', () => {
  for (const [what, error] of raw) {
    it(`every API gives STORE_UNAVAILABLE, with the store's error as the cause: ${what}`, async () => {
      const world = faultWorld()
      const setup = world.machine(askHarness(), 'setup')
      await drain((await setup.host.open({ sessionId: 'asked' })).send('go'))
      const { store, host } = world.machine(askHarness(), 'host')
      const calls: Array<[string, StoreOperation, () => Promise<unknown>]> = [
        ['host.open (read)', 'read', () => host.open({ sessionId: 's' })],
        ['host.open (lease)', 'leases.acquire', () => host.open({ sessionId: 's' })],
        ['host.answer', 'read', () => host.answer({ sessionId: 'asked', questionId: 'x:ok', answer: { ok: true } })],
        ['host.delete', 'delete', () => host.delete({ sessionId: 'asked' })],
      ]
      for (const [name, op, call] of calls) {
        const injected = error()
        store.inject({ match: op, fault: { kind: 'fail', error: injected } })
        const failure = await failureOf(call)
        expect(isHarnessError(failure, 'STORE_UNAVAILABLE'), `${name}: ${String(failure)}`).toBe(true)
        expect((failure as Error).cause, name).toBe(injected)
      }
      const open = await host.open({ sessionId: 's' })
      store.inject({ match: 'read', fault: { kind: 'fail', error: error() } })
      expect(isHarnessError(await failureOf(() => open.entries()), 'STORE_UNAVAILABLE')).toBe(true)
    })
  }

  it('a worker poll whose claim fails gives STORE_UNAVAILABLE', async () => {
    const world = faultWorld()
    const { createWorker } = await import('@tanstack/ai-harness')
    const { faultyStore } = await import('@tanstack/ai-harness/testing')
    const store = faultyStore(world.direct)
    store.inject({ match: 'wakeups.claim', fault: { kind: 'fail' } })
    const worker = createWorker({ store, harnesses: askHarness(), clock: world.clock })
    expect(isHarnessError(await failureOf(() => worker.poll()), 'STORE_UNAVAILABLE')).toBe(true)
  })
})
