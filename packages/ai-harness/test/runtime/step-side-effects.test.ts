import { toolDefinition } from '@tanstack/ai'
import { createWorker, defineHarness, durableTool, type Harness, type StepOptions } from '@tanstack/ai-harness'
import { faultyStore } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { batchModel, createWorld, drain, recordsOf, runUntilCrash, TEST_LEASE_MS, type World } from '../support/harness.js'

const MINUTE = 60_000

/** A harness whose one tool `work` runs `body` with the tool's step API, and returns what it returns (or its error's message). */
function oneTool(
  body: (step: Parameters<Parameters<typeof durableTool>[1]>[1]['step']) => Promise<unknown>,
  parkAfterMs?: number,
): Harness {
  const tool = durableTool(
    toolDefinition({ name: 'work', description: 'Does things', inputSchema: z.object({}) }),
    async (_a, { step }) => {
      try {
        return { value: await body(step) }
      } catch (error) {
        return { message: (error as Error).message }
      }
    },
  )
  return defineHarness({ name: 'effects', adapter: batchModel([{ name: 'work' }]), tools: [tool], ...(parkAfterMs ? { parkAfterMs } : {}) })
}

const workerOn = (world: World, harness: Harness) =>
  createWorker({
    store: memoryStore({ data: world.data, clock: world.clock }),
    harnesses: harness,
    clock: world.clock,
    leaseMs: TEST_LEASE_MS,
  })

const toolResult = async (world: World, sessionId: string) => recordsOf(await world.read(sessionId), 'harness.tool.result').at(-1)?.result

describe('a sibling step in a Promise.all when the other one parks', () => {
  it("the sibling's value is logged before the call parks, so the resumed call does not run its fn again", async () => {
    const world = createWorld()
    let emails = 0
    const retry: StepOptions = { attempts: 2, delayMs: 10 * MINUTE }
    const harness = oneTool((step) =>
      Promise.all([
        step.do('charge', retry, ({ attempt }) => {
          if (attempt === 1) throw new Error('gateway timeout')
          return 'charged'
        }),
        // Finishes a little after the charge failed and parked for its retry.
        step.do('email', async () => {
          await new Promise((resolve) => setTimeout(resolve, 20))
          emails++
          return 'sent'
        }),
      ]),
    )
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 's' })
    await drain(session.send('go'))
    expect(session.parked).toMatchObject({ reason: 'sleep' })
    expect(recordsOf(await world.read('s'), 'harness.step').map((r) => r.name)).toEqual(['email'])
    world.clock.advance(10 * MINUTE)
    const worker = workerOn(world, harness)
    expect((await worker.poll()).resumed).toEqual(['s'])
    await worker.stop()
    expect(emails).toBe(1)
    expect(await toolResult(world, 's')).toEqual({ value: ['charged', 'sent'] })
  })
})

describe('a host whose lease renewals fail while its appends work', () => {
  it('starts no step attempt once its lease is stale by its own clock; the host that takes over runs it once', async () => {
    const world = createWorld()
    const faulty = faultyStore(memoryStore({ data: world.data, clock: world.clock }))
    const ran: string[] = []
    const harness = oneTool(async (step) => {
      await step.do('first', () => {
        // From now on this host's renewals fail (its appends still work), and its fn takes longer than the lease.
        faulty.inject({ match: 'leases.renew', fault: { kind: 'fail' }, times: Number.POSITIVE_INFINITY })
        world.clock.advance(TEST_LEASE_MS + 1)
        ran.push('first')
        return 1
      })
      return step.do('second', () => {
        ran.push('second')
        return 2
      })
    })
    const { createHost } = await import('@tanstack/ai-harness')
    const host = createHost({ store: faulty, harnesses: harness, clock: world.clock, leaseMs: TEST_LEASE_MS, hostId: 'host-1' })
    const session = await host.open({ sessionId: 's' })
    await drain(session.send('go')).catch(() => [])
    // The first step's value landed; the second never started on the host whose lease had run out.
    expect(ran).toEqual(['first'])
    expect(recordsOf(await world.read('s'), 'harness.step').map((r) => r.name)).toEqual(['first'])
    const worker = workerOn(world, harness)
    expect((await worker.poll()).resumed).toEqual(['s'])
    await worker.stop()
    expect(ran).toEqual(['first', 'second'])
    expect(await toolResult(world, 's')).toEqual({ value: 2 })
  })
})

describe('a step with retries whose fn kills its host', () => {
  it('each cut attempt counts: after its budget the step fails for good, and fn is not called again', async () => {
    const world = createWorld()
    const attempts: number[] = []
    let machine: ReturnType<World['start']> | undefined
    const harness = oneTool((step) =>
      step.do('poison', { attempts: 2, delayMs: 0 }, ({ attempt }) => {
        attempts.push(attempt)
        machine!.store.crash()
        return new Promise(() => {})
      }),
    )
    for (const hostId of ['host-1', 'host-2']) {
      machine = world.start(harness, hostId)
      const session = await machine.host.open({ sessionId: 's' })
      await runUntilCrash(machine, hostId === 'host-1' ? session.send('go') : session.resume())
      world.expireLeases()
    }
    const last = await world.start(harness, 'host-3').host.open({ sessionId: 's' })
    await drain(last.resume())
    expect(attempts).toEqual([1, 2])
    const failures = recordsOf(await world.read('s'), 'harness.step.failed')
    expect(failures.map((f) => [f.attempt, f.final])).toEqual([[2, true]])
    expect(await toolResult(world, 's')).toEqual({ message: expect.stringContaining('began and never ended') })
  })
})
