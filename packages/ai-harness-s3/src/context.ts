import type { StoreLimits } from '@tanstack/ai-harness/store'
import type { LogCaches } from './caches.js'
import type { KeyLayout } from './keys.js'
import type { ObjectIO } from './objects.js'
import type { ReadPoints } from './read-points.js'

/** What the log operations of one store instance share. */
export interface LogContext {
  readonly io: ObjectIO
  readonly keys: KeyLayout
  readonly limits: StoreLimits
  /** Batch objects fetched at once by a read. */
  readonly readConcurrency: number
  readonly caches: LogCaches
  readonly points: ReadPoints
}
