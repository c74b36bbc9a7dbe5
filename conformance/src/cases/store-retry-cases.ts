import assert from 'node:assert/strict'
import { type HarnessStore, isHarnessError, type LogConflictError, type StoreRetryOptions } from '@tanstack/ai-harness/store'
import { assertSame, type CaseContext, defineCase, expectCode, readFrom, records } from '../case.js'
import type { WriteFault } from '../options.js'

// The store's own retries, driven through `options.faults`: a client that fails the writes
// of an append on cue. Every store retries with the core's `withRetry`, so the backoff is
// the same everywhere: with `random` at 0.5, half of 20 ms, doubling.

/** A faulty store of the case whose append writes meet `script` in turn (then go through), and what it saw. */
async function faultyStoreOf(context: CaseContext, script: readonly (WriteFault | undefined)[], retry: StoreRetryOptions = {}) {
  const seen = { writes: 0, delays: [] as number[], retried: [] as unknown[], injected: [] as unknown[] }
  const store: HarnessStore = await context.openFaultyStore({
    retry: {
      baseMs: 20,
      maxMs: 2_000,
      random: () => 0.5,
      sleep: async (ms) => void seen.delays.push(ms),
      onRetry: (error) => void seen.retried.push(error),
      ...retry,
    },
    onAppendWrite: () => script[seen.writes++],
    injected: (error) => void seen.injected.push(error),
  })
  return { store, seen }
}

export const storeRetryCases = [
  defineCase({
    id: 'store.retry.transient',
    title: 'an append whose write fails twice with a transient error is retried with backoff, and its batch lands once',
    async run(context) {
      const { store, seen } = await faultyStoreOf(context, ['fail', 'fail'])
      const batch = records(2, 'retried')
      const result = await store.append('log', 1, batch)
      assert.ok(
        seen.writes > 0,
        "the store createStore built with faults never asked faults.onAppendWrite() before its append's write: with faults: true, createStore wraps its client with context.faults and passes context.retry as the store's retry option",
      )
      assertSame(result, { nextSeq: 3 }, 'the append after two failed writes')
      assert.equal(seen.writes, 3, 'the batch is written three times: two failures, then the write that lands')
      assert.equal(seen.injected.length, 2, 'the client failed two writes')
      assertSame(seen.retried, seen.injected, 'each retry follows one of the injected failures, in order')
      assertSame(seen.delays, [10, 20], 'the backoff: half of 20 ms, then half of 40 ms (random() = 0.5)')
      assertSame(
        (await readFrom(context.store, 'log')).map((e) => e.record),
        batch,
        'the log holds the batch once',
      )
    },
  }),
  defineCase({
    id: 'store.retry.exhausted',
    title: 'when the retries run out, the append fails with STORE_UNAVAILABLE, the last failure as its cause, and nothing lands',
    async run(context) {
      const { store, seen } = await faultyStoreOf(context, ['fail', 'fail', 'fail', 'fail'], { retries: 2 })
      const error = await expectCode<Error & { cause?: unknown }>(store.append('log', 1, records(1, 'lost')), 'STORE_UNAVAILABLE', 'append')
      assert.ok(isHarnessError(error), 'the failure is a HarnessError')
      assert.equal(seen.writes, 3, 'one write and two retries (retries: 2)')
      assert.equal(seen.delays.length, 2, 'one backoff before each retry')
      assert.ok(seen.injected.includes(error.cause), 'the cause is a failure the client made, not a wrapper of it')
      assert.equal(error.cause, seen.injected.at(-1), 'the cause is the last failure')
      assertSame(await readFrom(context.store, 'log'), [], 'nothing landed')
    },
  }),
  defineCase({
    id: 'store.retry.lost-reply',
    title:
      'an append whose reply is lost after its batch landed is never written twice: the retry answers LOG_CONFLICT, the log holds the batch once',
    async run(context) {
      const { store, seen } = await faultyStoreOf(context, ['lose-reply'])
      const batch = records(2, 'landed')
      const error = await expectCode<LogConflictError>(store.append('log', 1, batch), 'LOG_CONFLICT', 'the append whose reply was lost')
      assert.equal(error.actualNextSeq, 3, 'the conflict gives the real next seq')
      assert.equal(seen.writes, 2, 'the write that landed, and its retry')
      assert.equal(seen.retried.length, 1, 'one retry, after the lost reply')
      assertSame(
        (await readFrom(context.store, 'log')).map((e) => e.record),
        batch,
        'the log holds the batch once',
      )
      // The harness reads back after an ambiguous failure and goes on from the real next seq.
      assertSame(await store.append('log', 3, records(1, 'next')), { nextSeq: 4 }, 'the next append')
    },
  }),
  defineCase({
    id: 'store.retry.unanswered',
    title:
      'an append whose batch landed but whose reply was lost, and whose retries all fail, ends in STORE_UNAVAILABLE; the batch is in the log once, and appending it again conflicts with the real next seq',
    async run(context) {
      // The first append goes through; the second lands, loses its reply, and the retries
      // meet a network that stays down.
      const { store, seen } = await faultyStoreOf(context, [undefined, 'lose-reply', 'fail', 'fail'], { retries: 2 })
      const first = records(1, 'first')
      const batch = records(2, 'unanswered')
      await store.append('log', 1, first)
      const error = await expectCode<Error & { cause?: unknown }>(
        store.append('log', 2, batch),
        'STORE_UNAVAILABLE',
        'the append that never got an answer',
      )
      assert.equal(seen.writes, 4, 'the first append, then the write that landed and two retries (retries: 2)')
      assert.equal(error.cause, seen.injected.at(-1), 'the cause is the last failure')
      const expected = [...first, ...batch]
      assertSame(
        (await readFrom(context.store, 'log')).map((e) => e.record),
        expected,
        'the log after an append that may have landed: the batch once',
      )
      // A caller that appends the batch again without reading first, from either instance.
      for (const [what, instance] of [
        ['another instance', context.store],
        ['the instance whose append failed', store],
      ] as const) {
        const again = await expectCode<LogConflictError>(
          instance.append('log', 2, batch),
          'LOG_CONFLICT',
          `appending it again from ${what}`,
        )
        assert.equal(again.actualNextSeq, 4, `the conflict from ${what} gives the real next seq`)
      }
      assertSame(
        (await readFrom(context.store, 'log')).map((e) => e.record),
        expected,
        'the log after appending the batch again',
      )
    },
  }),
]
