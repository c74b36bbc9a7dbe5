export { memoryStore, createMemoryData, dumpMemoryData, MEMORY_DEFAULT_LIMITS } from './memory-store.js'
export type { MemoryData, MemoryStoreOptions } from './memory-store.js'
