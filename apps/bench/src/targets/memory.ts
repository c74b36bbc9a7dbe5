import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { countingStore } from './counting-store.js'
import { RequestCounter } from './requests.js'
import type { Target } from './target.js'

/**
 * The in-process store. It has no client, so each store call is one "request". Its
 * baseline mirrors what the store itself does per operation: one event-loop turn
 * (the store yields one so concurrent writers interleave), then an insert-if-absent.
 */
export function memoryTarget(): Target {
  const data = createMemoryData()
  const requests = new RequestCounter()
  const bare = new Map<string, string>()
  return {
    name: 'memory',
    requests,
    createStore: () => countingStore(memoryStore({ data }), requests),
    async bareWrite(key, bytes) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (bare.has(key)) throw new Error(`bare write conflict at ${key}`)
      bare.set(key, bytes)
    },
    childConnection: () => ({ store: 'memory' }),
    async close() {
      data.logs.clear()
      bare.clear()
    },
  }
}
