import { createHost, createWorker } from '@tanstack/ai-harness'
import { openWaits } from '@tanstack/ai-harness/log'
import { WAITING_FOR_PERSON } from '@tanstack/ai-harness/store'
import { createManualClock, drain } from '@tanstack/ai-harness/testing'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { askHarness } from '../support/faults.js'

/** A session parked on a question, its wakeup at WAITING_FOR_PERSON, on a store several processes share. */
async function parkedOnQuestion() {
  const data = createMemoryData()
  const clock = createManualClock()
  const open = () => memoryStore({ data, clock })
  const host = createHost({ store: open(), harnesses: askHarness(), clock, hostId: 'web' })
  await drain((await host.open({ sessionId: 'order-1' })).send('go'))
  const waiting = async () => open().sessions!.waiting()
  return { data, clock, open, host, waiting }
}

describe('a worker sweeps the sessions that wait for a person', () => {
  it('wakes a session whose answer is logged but whose wakeup a dying parker moved back to waiting', async () => {
    const { clock, open, host, waiting } = await parkedOnQuestion()
    const session = await host.open({ sessionId: 'order-1' })
    const [question] = openWaits('order-1', await session.entries()).questions
    await session.close()
    await host.answer({ sessionId: 'order-1', questionId: question!.questionId, answer: { ok: true } })
    // A host that read the log before the answer parks the session again, then dies before it reads the log once more.
    await open().wakeups!.schedule('order-1', WAITING_FOR_PERSON)
    expect(await waiting()).toEqual(['order-1'])

    const worker = createWorker({ store: open(), harnesses: askHarness(), clock, workerId: 'w' })
    const first = await worker.poll()
    // The sweep made it due; the next claim resumes it (the first poll may already have).
    const second = await worker.poll()
    expect([...first.resumed, ...second.resumed]).toEqual(['order-1'])
    const records = (await open().read('order-1')).map((e) => e.record)
    expect(records.filter((r) => r.type === 'harness.tool.result')).toEqual([expect.objectContaining({ ok: true, result: 'yes' })])
    expect(records.at(-1)?.type).toBe('harness.turn.finished')
    expect(await waiting()).toEqual([])
    await worker.stop()
  })

  it('leaves a session that still waits as it is, and looks again only after sweepMs', async () => {
    const { data, clock, open, waiting } = await parkedOnQuestion()
    const store = open()
    let looks = 0
    const waitingOf = (options?: object) => {
      looks++
      return store.sessions!.waiting(options)
    }
    const counted = { ...store, sessions: { ...store.sessions!, waiting: waitingOf } }
    const worker = createWorker({ store: counted, harnesses: askHarness(), clock, workerId: 'w', sweepMs: 10_000 })
    const before = JSON.stringify([...data.wakeups])
    expect(await worker.poll()).toEqual({ resumed: [], busy: [], idle: [], failed: [] })
    expect(looks).toBe(1)
    expect(await waiting()).toEqual(['order-1'])
    await worker.poll()
    expect(looks).toBe(1)
    clock.advance(10_000)
    await worker.poll()
    expect(looks).toBe(2)
    expect(await waiting()).toEqual(['order-1'])
    expect(JSON.stringify([...data.wakeups])).toBe(before)
    await worker.stop()
  })
})
