import type { Clock, HarnessStore } from '../contract/types.js'
import { HARNESS_LOG_PREFIX } from '../contract/harness-logs.js'
import type { SecretScanner } from '../secrets/secret-scanner.js'

/** Options of {@link harnessStreams}. */
export interface HarnessStreamsOptions {
  /** The store the streams live in: any `HarnessStore`, as it is. */
  readonly store: HarnessStore
  /** Time of a close and of retention. Default: the wall clock. */
  readonly clock?: Clock
  /**
   * The session's secrets: every chunk has them cut (`[secret]`) before it is stored,
   * with the scanner the log uses. A list of secrets, or a `SecretScanner`.
   */
  readonly secrets?: SecretScanner | Iterable<string>
  /**
   * How long a closed stream stays readable, in ms (default 300 000, as TanStack's
   * `memoryStream`). The first read or snapshot after that deletes it; `remove(runId)`
   * deletes it at once.
   */
  readonly retainMs?: number
  /**
   * How long a from-start join (`read('-1')`, `read('now')`) of a run with nothing
   * stored waits for its first chunk before it fails with `STREAM_NOT_FOUND`. Default 1000.
   */
  readonly firstChunkDeadlineMs?: number
  /** The first and the longest wait between two polls of a tailing reader, in ms. Default 5 and 100. */
  readonly pollMs?: { readonly min?: number; readonly max?: number }
}

/** Which run a durability adapter attaches to, when there is no `Request`. */
export interface StreamInit {
  readonly runId: string
  /** The resume offset (`resumeFrom()` returns it). Default null: a producer, or a from-start reader. */
  readonly offset?: string | null
}

/** The log id of a run's stream: a prefix of the harness's own, so it never meets a session's id. */
export const streamLogId = (runId: string): string => `${HARNESS_LOG_PREFIX}stream/${runId}`
/** The lease id of a lock. */
export const lockLogId = (key: string): string => `${HARNESS_LOG_PREFIX}lock/${key}`
