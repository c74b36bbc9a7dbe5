import assert from 'node:assert/strict'
import type { HarnessStore } from '@tanstack/ai-harness/store'
import { defineCase } from '../case.js'

const FIX =
  "store.now() returns the time of the clock the store was given (createStore's clock in tests, the database's clock in production), read on every call: never Date.now() of the caller, never a value kept from an earlier call, never rounded to seconds"

async function nowOf(store: HarnessStore, what: string): Promise<number> {
  const time = await store.now!()
  assert.ok(
    typeof time === 'number' && Number.isFinite(time),
    `${what}: store.now() returned ${String(time)}, not a number of ms since the epoch`,
  )
  return time
}

export const storeClockCases = [
  defineCase({
    id: 'store.now.clock',
    title:
      "store.now() is the store's clock to the ms, read anew on every call, in every instance (and a skewed instance reads its own clock)",
    async run({ store, clock, openStore, openSkewedStore }) {
      if (!store.now) return // a store without a clock of its own: hosts use theirs
      const start = clock.now()
      assert.equal(await nowOf(store, 'first call'), start, `store.now() is not the clock the store was given (${start}). ${FIX}`)
      for (const step of [1, 1, 7, 999, 1_000, 60_000]) {
        clock.advance(step)
        assert.equal(
          await nowOf(store, `after the clock moved ${step} ms`),
          clock.now(),
          `store.now() after the clock moved ${step} ms. ${FIX}`,
        )
      }
      const other = await openStore()
      assert.equal(await nowOf(other, 'another instance'), clock.now(), `store.now() of another instance. ${FIX}`)
      const ahead = await openSkewedStore(5_000)
      if (ahead.now)
        assert.equal(
          await nowOf(ahead, 'an instance whose clock runs 5 s ahead'),
          clock.now() + 5_000,
          `store.now() of an instance whose clock runs 5 s ahead. ${FIX}`,
        )
    },
  }),
]
