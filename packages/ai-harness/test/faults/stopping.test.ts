import { describe, expect, it } from 'vitest'
import { faultWorld, gate, stepHarness, within } from '../support/faults.js'
import { drain, recordsOf } from '../support/harness.js'

/** Short, so a test that proves "bounded" does not wait long; every wait is bounded by `within`. */
const stopTimeoutMs = 100

/** A session whose tool is inside a step function that has not returned (and may never). */
async function stuckInAStep(release = gate<string>()) {
  const world = faultWorld()
  const started = gate()
  const { harness, keys } = stepHarness(() => {
    started.open()
    return release.promise
  })
  const machine = world.machine(harness, 'host', { stopTimeoutMs })
  const session = await machine.host.open({ sessionId: 's' })
  const stream = drain(session.send('work'))
  await started.promise
  return { world, machine, session, stream, keys, release }
}

/** A harness whose step returns at once, for the host that takes the turn over. */
const finisher = () => stepHarness(() => 'done').harness

describe('stopping while a step function never returns', () => {
  it('host.shutdown() returns, the lease is free at once, and a worker resumes the turn with the same idempotency key', async () => {
    const { world, machine, stream, keys } = await stuckInAStep()
    await within(5_000, machine.host.shutdown(), 'shutdown')
    await within(5_000, stream, 'the stream of the stopped turn')
    expect(world.data.leases.has('s'), 'the lease is released').toBe(false)
    expect(world.traces('s').wakeup).toBe(world.clock.now())

    const { harness, keys: again } = stepHarness(() => 'done')
    expect((await world.worker(harness, 'worker').poll()).resumed).toEqual(['s'])
    expect(again).toEqual(keys)
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
  })

  it('session.close() returns and frees the lease; a step that returns later writes nothing', async () => {
    const { world, session, stream, release } = await stuckInAStep()
    await within(5_000, session.close(), 'close')
    await within(5_000, stream, 'the stream')
    expect(world.data.leases.has('s'), 'the lease is released').toBe(false)
    const before = (await world.read('s')).length
    release.open('late')
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect((await world.read('s')).length).toBe(before)

    const other = world.machine(finisher(), 'other')
    await drain((await other.host.open({ sessionId: 's' })).resume())
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
  })

  it('a step that fails after its run was abandoned reaches nobody: no unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      const { session, stream, release } = await stuckInAStep()
      await within(5_000, session.close(), 'close')
      await within(5_000, stream, 'the stream')
      release.fail(new Error('the payment API timed out'))
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('session.handOff() returns, the turn stays open and is due at once', async () => {
    const { world, session, stream } = await stuckInAStep()
    await within(5_000, session.handOff(), 'handOff')
    await within(5_000, stream, 'the stream')
    expect(world.data.leases.has('s'), 'the lease is released').toBe(false)
    expect(world.traces('s').wakeup).toBe(world.clock.now())
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(0)
  })

  it('session.cancel() returns with the turn cancelled; a step that returns later writes nothing after it', async () => {
    const { world, session, stream, release } = await stuckInAStep()
    await within(5_000, session.cancel('stop it'), 'cancel')
    await within(5_000, stream, 'the stream')
    release.open('late')
    await new Promise((resolve) => setTimeout(resolve, 20))
    const types = (await world.read('s')).map((e) => e.record.type)
    expect(types.at(-1)).toBe('harness.turn.cancelled')
    expect(types).not.toContain('harness.step')
    expect(world.traces('s').wakeup).toBeUndefined()
  })

  it('worker.stop() returns while the worker drives a turn whose step never returns', async () => {
    const world = faultWorld()
    const started = gate()
    const { harness } = stepHarness(() => {
      started.open()
      return new Promise(() => {})
    })
    // Start the turn elsewhere and hand it off, so the worker is the one that gets stuck.
    const { host } = world.machine(stepHarness(() => new Promise(() => {})).harness, 'host', { stopTimeoutMs })
    const first = await host.open({ sessionId: 's' })
    void drain(first.send('work'))
    await new Promise((resolve) => setTimeout(resolve, 20))
    await within(5_000, host.shutdown(), 'shutdown')
    const worker = world.worker(harness, 'worker', { stopTimeoutMs })
    const polling = worker.poll()
    await started.promise
    await within(5_000, worker.stop(), 'worker.stop')
    await within(5_000, polling, 'the poll')
    expect(world.data.leases.has('s'), 'the lease is released').toBe(false)
  })
})
