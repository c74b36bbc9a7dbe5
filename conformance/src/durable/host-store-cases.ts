import assert from 'node:assert/strict'
import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type HarnessStore } from '@tanstack/ai-harness'
import { recordsOf, scriptedText, startMachine } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { defineCase, readFrom } from '../case.js'
import { drain } from './fixtures.js'

const HOUR = 3_600_000

/** A tool that sleeps an hour: its logged wake time says which clock the host used. */
function napper() {
  const tool = durableTool(toolDefinition({ name: 'nap', description: 'n', inputSchema: z.object({}) }), async (_a, { step }) => {
    await step.sleep('nap', HOUR)
    return 'rested'
  })
  const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'nap', args: {} }] } : 'Done.'))
  return defineHarness({ name: 'napper', adapter, tools: [tool] })
}

/** The store with every append's options recorded: what the host on the case's machine sent. */
function recordingAppends(store: HarnessStore, seen: Array<{ lease?: unknown }>): HarnessStore {
  return {
    ...store,
    append: (logId, expectedSeq, records, options) => {
      seen.push({ ...options })
      return store.append(logId, expectedSeq, records, options)
    },
  }
}

export const hostStoreCases = [
  defineCase({
    id: 'durable.host.store-clock-and-fence',
    title:
      "a host whose own clock runs two hours behind takes a sleep's wake time from store.now(), and sends its lease with every append (the machines of the durable cases keep both)",
    requires: ['leases', 'wakeups'],
    async run(context) {
      const { clock } = context
      const seen: Array<{ lease?: unknown }> = []
      const behind = { now: () => clock.now() - 2 * HOUR }
      const machine = startMachine(recordingAppends(await context.openStore(), seen), {
        harnesses: napper(),
        clock: behind,
        hostId: 'host',
      })
      const session = await machine.host.open({ sessionId: 'nap' })
      await drain(session.send('sleep'))
      const [sleep] = recordsOf(await readFrom(context.store, 'nap'), 'harness.sleep')
      const storeTime = context.store.now ? await context.store.now() : behind.now()
      const expected = (context.store.now ? clock.now() : behind.now()) + HOUR
      assert.equal(
        sleep?.wakeAt,
        expected,
        `the sleep's wake time is ${String(sleep?.wakeAt)}, not ${expected} (store.now() ${storeTime} + 1 h): a host takes durable times from store.now() when the store has one, so keep now on every store you hand a host (wrappers included)`,
      )
      if (context.store.now) {
        assert.deepEqual(
          await context.store.wakeups!.due(10),
          [],
          'the session woke early: its wakeup is due before the store clock reaches the wake time',
        )
      }
      if (context.options.skip?.fencing === undefined) {
        const unfenced = seen.filter((options) => options.lease === undefined).length
        assert.equal(
          unfenced,
          0,
          `${unfenced} of the host's ${seen.length} appends carried no lease: a host fences every append with its lease, so a store wrapper must pass append's options through`,
        )
      }
    },
  }),
]
