import type { LogRecord, ReadOptions, StoreLimits } from '@tanstack/ai-harness/store'
import { appendLog } from './append.js'
import { LogCaches } from './caches.js'
import type { LogContext } from './context.js'
import { deleteLog } from './delete.js'
import type { KeyLayout } from './keys.js'
import type { ObjectIO } from './objects.js'
import { readLog } from './read.js'
import { ReadPoints } from './read-points.js'

/**
 * The session logs: each append is one batch object, numbered densely in a generation
 * (see `append.ts`); a read pages through them (see `read.ts`); `delete` leaves a
 * tombstone on every slot a writer could know and starts the next log of the id in the
 * next generation (see `delete.ts`). The caches are per instance.
 */
export function logStore(io: ObjectIO, keys: KeyLayout, limits: StoreLimits, readConcurrency: number) {
  const ctx: LogContext = { io, keys, limits, readConcurrency, caches: new LogCaches(io), points: new ReadPoints() }
  return {
    append: (logId: string, expectedSeq: number, records: readonly LogRecord[]) => appendLog(ctx, logId, expectedSeq, records),
    read: (logId: string, options?: ReadOptions) => readLog(ctx, logId, options),
    deleteLog: (logId: string) => deleteLog(ctx, logId),
  }
}
