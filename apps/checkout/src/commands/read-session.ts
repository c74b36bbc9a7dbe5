import { type LogEntry, readAll } from '@tanstack/ai-harness/store'
import type { MemoryData } from '@tanstack/ai-harness-memory'
import { openStore } from '../store/open-store.js'
import type { StoreConfig } from '../store/store-config.js'

/** Reads a session's whole log, opening and closing the store around it. */
export async function readSession(config: StoreConfig, sessionId: string, memoryData?: MemoryData): Promise<LogEntry[]> {
  const opened = await openStore(config, memoryData ? { memoryData } : {})
  try {
    return await readAll(opened.store, sessionId)
  } finally {
    await opened.close()
  }
}
