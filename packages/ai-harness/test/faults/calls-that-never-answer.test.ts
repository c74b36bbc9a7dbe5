import { appendOf } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { chatHarness, faultWorld, within } from '../support/faults.js'
import { codeOf, drain, TEST_LEASE_MS, recordsOf } from '../support/harness.js'

/** Far below the default, so a hung call fails fast; every assertion is bounded by `within`. */
const storeTimeoutMs = 100

describe('a store call that never answers (a half-open connection)', () => {
  it('an append that hangs before reaching the store times out; the same batch is written again and the turn finishes', async () => {
    const world = faultWorld()
    const { store, host } = world.machine(chatHarness(), 'host', { storeTimeoutMs })
    const session = await host.open({ sessionId: 's' })
    const hung = store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'hang' } })
    await within(5_000, drain(session.send('hi')), 'the turn')
    expect(hung.hits).toBe(1)
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.turn.started')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    await within(5_000, session.close(), 'close')
  })

  it('when every call hangs after the write ran: send fails with STORE_UNAVAILABLE, close and shutdown return, and a worker finishes the turn later', async () => {
    const world = faultWorld()
    const { store, host } = world.machine(chatHarness(), 'host', { storeTimeoutMs })
    const session = await host.open({ sessionId: 's' })
    const hung = store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'hang', run: true } })
    // From then on the connection is gone: nothing answers.
    void hung.hit.then(() => store.inject({ fault: { kind: 'hang' }, times: Infinity }))
    expect(
      await within(
        5_000,
        codeOf(() => drain(session.send('hi'))),
        'send',
      ),
    ).toBe('STORE_UNAVAILABLE')
    await within(5_000, session.close(), 'close')
    await within(5_000, host.shutdown(), 'shutdown')
    expect(recordsOf(await world.read('s'), 'harness.turn.started')).toHaveLength(1)
    expect(world.traces('s').wakeup, 'the wakeup set before the turn began stays').toBeDefined()

    world.clock.advance(TEST_LEASE_MS + 1)
    expect((await world.worker(chatHarness(), 'worker').poll()).resumed).toEqual(['s'])
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
  })

  it('a host whose store call hangs stops renewing its lease, so another host takes the session over at the expiry', async () => {
    const world = faultWorld()
    // A short lease renews every 250 ms of real time; the deadline is far away, so only the progress bound can act.
    const leaseMs = 750
    const { store, host } = world.machine(chatHarness(), 'stuck', {
      leaseMs,
      storeTimeoutMs: 60_000,
      stallAfterMs: 300,
      stopTimeoutMs: 200,
    })
    const session = await host.open({ sessionId: 's' })
    const hung = store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'hang' } })
    const sending = drain(session.send('hi')).catch(() => {})
    await hung.hit
    world.clock.advance(400)
    // Let the renewal timer tick a few times: a host making progress would renew now.
    await new Promise((resolve) => setTimeout(resolve, 800))
    world.clock.advance(leaseMs - 400)
    const other = world.machine(chatHarness(), 'other', { leaseMs })
    const taken = await other.host.open({ sessionId: 's' })
    await drain(taken.send('hello'))
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
    await within(5_000, session.close(), 'close of the stuck session')
    void sending
  })
})
