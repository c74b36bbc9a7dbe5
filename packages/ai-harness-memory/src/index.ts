export { memoryStore } from './memory-store.js'
export { createMemoryData, dumpMemoryData, type MemoryData } from './memory-data.js'
export { MEMORY_DEFAULT_LIMITS, MEMORY_MAX_LOG_ID_BYTES, type MemoryStoreOptions } from './options.js'
