import type { HarnessStore, LogRecord } from '@tanstack/ai-harness'
import type { RequestCounter } from './requests.js'
import type { ChildConnection } from './target.js'

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

/** Loads only the chosen store's client, so a child starts fast and its baseline memory is its own. */
export async function childAccess(connection: ChildConnection): Promise<ChildAccess> {
  switch (connection.store) {
    case 'memory':
      return (await import('./child/memory.js')).memoryAccess()
    case 'postgres':
      return (await import('./child/postgres.js')).postgresAccess(connection)
    case 'pglite':
      return (await import('./child/pglite.js')).pgliteAccess(connection)
    case 'dynamodb':
      return (await import('./child/dynamodb.js')).dynamoAccess(connection)
    case 's3':
      return (await import('./child/s3.js')).s3Access(connection)
  }
}
