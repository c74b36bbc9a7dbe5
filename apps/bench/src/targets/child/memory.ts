import type { LogRecord } from '@tanstack/ai-harness/store'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import type { ChildAccess } from './access.js'
import { countingStore } from '../counting-store.js'
import { RequestCounter } from '../requests.js'

/** The memory store lives in the child itself: the child writes the log before it measures. */
export function memoryAccess(): ChildAccess {
  const requests = new RequestCounter()
  const data = createMemoryData()
  return {
    requests,
    createStore: () => countingStore(memoryStore({ data }), requests),
    bareRead: async (logId) => (data.logs.get(logId) ?? []).map((text) => JSON.parse(text) as LogRecord),
    close: async () => data.logs.clear(),
  }
}
