import type { StoreConfig } from '../store/store-config.js'
import type { CrashReport } from './crash-points.js'
import type { SessionJob, SessionOutcome } from './run-session.js'

/** The hidden command a child process runs: `node dist/cli.js __child <job JSON>`. */
export const CHILD_COMMAND = '__child'

/** Everything a child needs, as one JSON argument. */
export interface ChildJob extends SessionJob {
  store: StoreConfig
}

/** What a child tells its parent over the IPC channel. */
export type ChildMessage =
  /** The child reached its crash point and now waits for SIGKILL. */
  | { type: 'crash-point'; report: CrashReport }
  | { type: 'done'; outcome: SessionOutcome }
  | { type: 'error'; message: string; exitCode: number }

/** Narrows an IPC message to the protocol; anything else on the channel is ignored. */
export function isChildMessage(value: unknown): value is ChildMessage {
  const type = (value as { type?: unknown } | null)?.type
  return type === 'crash-point' || type === 'done' || type === 'error'
}
