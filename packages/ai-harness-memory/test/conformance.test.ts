import { runConformance } from '@tanstack/ai-harness-conformance'
import { createMemoryData, dumpMemoryData, type MemoryData, memoryStore } from '@tanstack/ai-harness-memory'

// Each namespace is one "database"; every createStore call is another process on it.
const databases = new Map<string, MemoryData>()
const database = (namespace: string) => databases.get(namespace) ?? databases.set(namespace, createMemoryData()).get(namespace)!

runConformance({
  name: 'memory',
  createStore: ({ namespace, clock }) => memoryStore({ data: database(namespace), clock }),
  dump: async ({ namespace }) => dumpMemoryData(database(namespace)),
  cleanup: async ({ namespace }) => void databases.delete(namespace),
})
