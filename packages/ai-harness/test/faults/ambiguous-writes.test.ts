import { HARNESS_EVENTS } from '@tanstack/ai-harness'
import { LogConflictError, WAITING_FOR_PERSON } from '@tanstack/ai-harness/store'
import { appendOf } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { askHarness, chatHarness, faultWorld } from '../support/faults.js'
import { codeOf, drain, TEST_LEASE_MS, recordsOf } from '../support/harness.js'

describe('a turn.started whose reply is lost (the record landed, the host does not know)', () => {
  it('send fails; after the network is back, close reads the log back, keeps the wakeup, and a worker finishes the turn', async () => {
    const world = faultWorld()
    const { store, host } = world.machine(chatHarness(), 'host')
    const session = await host.open({ sessionId: 's' })
    store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'lose-reply' } })
    const reads = store.inject({ match: 'read', fault: { kind: 'fail' }, times: Infinity })
    expect(await codeOf(() => drain(session.send('hi')))).toBe('STORE_UNAVAILABLE')
    expect(recordsOf(await world.read('s'), 'harness.turn.started')).toHaveLength(1)

    reads.remove()
    await session.close()
    expect(world.traces('s').wakeup, 'the only wakeup of an open turn stays').toBeDefined()
    expect(world.traces('s').lease, 'the lease is released').toBe(false)

    world.clock.advance(TEST_LEASE_MS + 1)
    const poll = await world.worker(chatHarness(), 'worker').poll()
    expect(poll.resumed).toEqual(['s'])
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
    expect(world.traces('s').wakeup).toBeUndefined()
  })

  it('when the log cannot be read back at close either, the wakeup stays', async () => {
    const world = faultWorld()
    const { store, host } = world.machine(chatHarness(), 'host')
    const session = await host.open({ sessionId: 's' })
    store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'lose-reply' } })
    store.inject({ match: 'read', fault: { kind: 'fail' }, times: Infinity })
    expect(await codeOf(() => drain(session.send('hi')))).toBe('STORE_UNAVAILABLE')
    await session.close()
    expect(world.traces('s').wakeup).toBeDefined()

    world.clock.advance(TEST_LEASE_MS + 1)
    expect((await world.worker(chatHarness(), 'worker').poll()).resumed).toEqual(['s'])
    expect(recordsOf(await world.read('s'), 'harness.turn.finished')).toHaveLength(1)
  })

  it('the same session object settles the doubt before it writes again: the landed prompt runs first, then the new one', async () => {
    const world = faultWorld()
    const { store, host } = world.machine(chatHarness(), 'host')
    const session = await host.open({ sessionId: 's' })
    store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'lose-reply' } })
    const reads = store.inject({ match: 'read', fault: { kind: 'fail' }, times: Infinity })
    expect(await codeOf(() => drain(session.send('first')))).toBe('STORE_UNAVAILABLE')
    expect(await codeOf(() => drain(session.send('second'))), 'still in doubt: refuses rather than guess').toBe('STORE_UNAVAILABLE')
    expect(recordsOf(await world.read('s'), 'harness.turn.started')).toHaveLength(1)

    reads.remove()
    await drain(session.send('second'))
    const entries = await world.read('s')
    expect(entries.map((e) => e.record.type)).toEqual([
      'harness.session.opened',
      'harness.turn.started',
      'harness.turn.resumed',
      'harness.assistant',
      'harness.turn.finished',
      'harness.turn.started',
      'harness.assistant',
      'harness.turn.finished',
    ])
    expect(recordsOf(entries, 'harness.turn.started').map((r) => (r.messages as Array<{ content: string }>)[0]!.content)).toEqual([
      'first',
      'second',
    ])
  })

  it('a write that did not land is written once when the doubt is settled', async () => {
    const world = faultWorld()
    const { store, host } = world.machine(chatHarness(), 'host')
    const session = await host.open({ sessionId: 's' })
    // Fails before the store: nothing landed, yet the host cannot know, as the read back fails too.
    store.inject({ match: appendOf('harness.turn.started'), fault: { kind: 'fail' } })
    const reads = store.inject({ match: 'read', fault: { kind: 'fail' }, times: Infinity })
    expect(await codeOf(() => drain(session.send('hi')))).toBe('STORE_UNAVAILABLE')
    reads.remove()
    await drain(session.resume())
    const entries = await world.read('s')
    expect(recordsOf(entries, 'harness.turn.started')).toHaveLength(1)
    expect(recordsOf(entries, 'harness.turn.finished')).toHaveLength(1)
  })
})

describe('an answer whose reply is lost', () => {
  async function parkedOnAQuestion() {
    const world = faultWorld()
    const { host } = world.machine(askHarness(), 'host')
    const chunks = await drain((await host.open({ sessionId: 's' })).send('go'))
    const question = chunks.find((c) => (c as { name?: string }).name === HARNESS_EVENTS.question) as unknown as {
      value: { questionId: string }
    }
    expect(world.traces('s').wakeup, 'a session waiting for an answer is never due').toBe(WAITING_FOR_PERSON)
    return { world, questionId: question.value.questionId }
  }

  it('the store retried and met its own answer (a conflict): answer() finds it logged, succeeds, and schedules the session', async () => {
    const { world, questionId } = await parkedOnAQuestion()
    const { store, host } = world.machine(askHarness(), 'other')
    const landed = store.inject({ match: appendOf('harness.answer'), fault: { kind: 'lose-reply', error: new LogConflictError('s', 0) } })
    await host.answer({ sessionId: 's', questionId, answer: { ok: true } })
    expect(landed.hits).toBe(1)
    expect(recordsOf(await world.read('s'), 'harness.answer')).toHaveLength(1)
    expect(world.traces('s').wakeup).toBe(world.clock.now())
    expect((await world.worker(askHarness(), 'worker').poll()).resumed).toEqual(['s'])
    expect(recordsOf(await world.read('s'), 'harness.tool.result')[0]?.result).toBe('yes')
  })

  it('the connection dropped after the append ran: answer() reads again, finds its answer, and schedules the session', async () => {
    const { world, questionId } = await parkedOnAQuestion()
    const { store, host } = world.machine(askHarness(), 'other')
    store.inject({ match: appendOf('harness.answer'), fault: { kind: 'lose-reply' } })
    await host.answer({ sessionId: 's', questionId, answer: { ok: true } })
    expect(recordsOf(await world.read('s'), 'harness.answer')).toHaveLength(1)
    expect(world.traces('s').wakeup).toBeDefined()
  })

  it('a caller that retries after STORE_UNAVAILABLE succeeds with the same answer, and its wakeup is set; a different answer is refused', async () => {
    const { world, questionId } = await parkedOnAQuestion()
    const { store, host } = world.machine(askHarness(), 'other')
    store.inject({ match: appendOf('harness.answer'), fault: { kind: 'lose-reply' } })
    store.inject({ match: 'wakeups.schedule', fault: { kind: 'fail' } })
    expect(await codeOf(() => host.answer({ sessionId: 's', questionId, answer: { ok: true } }))).toBe('STORE_UNAVAILABLE')
    expect(world.traces('s').wakeup, 'not woken yet: still waiting for a person').toBe(WAITING_FOR_PERSON)

    await host.answer({ sessionId: 's', questionId, answer: { ok: true } })
    expect(world.traces('s').wakeup, 'due now').toBeLessThan(WAITING_FOR_PERSON)
    expect(await codeOf(() => host.answer({ sessionId: 's', questionId, answer: { ok: false } }))).toBe('ALREADY_ANSWERED')
    expect(recordsOf(await world.read('s'), 'harness.answer')).toHaveLength(1)
  })
})
