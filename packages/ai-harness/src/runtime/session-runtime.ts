import type { Clock, HarnessStore } from '../contract/types.js'
import type { SecretScanner } from '../secrets/secret-scanner.js'
import type { SessionSecrets } from '../secrets/session-secrets.js'
import type { Harness } from './harness.js'
import type { Session } from './session.js'
import type { SessionState } from './session-fold.js'
import type { SessionWriter } from './session-writer.js'

/** What every part of a running session shares. One per open session. */
export interface SessionRuntime {
  /** The session's id; the store knows it as the log id. */
  readonly sessionId: string
  readonly harness: Harness
  readonly store: HarnessStore
  readonly state: SessionState
  readonly writer: SessionWriter
  readonly scanner: SecretScanner
  /** Every secret of the session, and how tools read more. `scanner` is its scanner. */
  readonly sessionSecrets: SessionSecrets
  readonly clock: Clock
  /** Secrets given when the session was opened, by name. */
  readonly secrets: ReadonlyMap<string, string>
  /** Largest step record, in bytes. */
  readonly maxStepBytes: number
  /** Sleeps longer than this park the session instead of waiting in the process. */
  readonly parkAfterMs: number
  /**
   * Resolves when this host may start a side effect (a step attempt, the end of a sleep, an
   * approved call): by its own clock its lease is fresh, renewed first if it is not. Rejects
   * when the lease is gone or cannot be renewed now: then nothing starts.
   */
  readonly leaseFresh: () => Promise<void>
  /** A writer scope for one step attempt of the current run (see `TurnRun.stepScope`); `release` when it ended. */
  readonly stepScope: () => { writer: SessionWriter; release: () => void }
  /** Opens the child session of an agent-tool call, on the same store, clock and host id. */
  readonly openChild: (harness: Harness, sessionId: string, parent: { sessionId: string; toolCallId: string }) => Promise<Session>
}
