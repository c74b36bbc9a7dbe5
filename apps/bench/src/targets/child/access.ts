import type { HarnessStore } from '@tanstack/ai-harness'
import type { LogRecord } from '@tanstack/ai-harness/store'
import type { RequestCounter } from '../requests.js'

/**
 * What a recovery child opens: fresh store instances on one client (a new host each
 * time, so no cache survives from one open to the next), and the baseline: the log's
 * stored bytes read through the same client and parsed, with none of the store's checks.
 */
export interface ChildAccess {
  requests: RequestCounter
  createStore(): HarnessStore
  bareRead(logId: string): Promise<LogRecord[]>
  close(): Promise<void>
}
