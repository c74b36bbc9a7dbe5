import type { StreamChunk } from '@tanstack/ai'
import type { Clock, Lease, LogEntry } from '../contract/types.js'
import type { SessionSecrets } from '../secrets/session-secrets.js'
import type { Harness } from './harness.js'
import type { LoggedMessage, ParkedRecord } from './records.js'
import type { SessionFold } from './session-fold.js'
import type { SessionStatus } from './session-status.js'
import type { GuardedStore } from './store-boundary.js'
import type { RuntimeTimings } from './timings.js'

/** A prompt: text, or TanStack AI model messages. */
export type TurnInput = string | LoggedMessage | LoggedMessage[]

/** An open session: one host drives it until `close()`. */
export interface Session {
  readonly id: string
  readonly harness: Harness
  /** True when the session's last turn is open: cut by a crash, stopped for a deploy, or waiting. */
  readonly needsRecovery: boolean
  /** What the session is doing, as this object knows it (see {@link SessionStatus}). */
  readonly status: SessionStatus
  /** Why the open turn waits (a long sleep, a question), if it does. */
  readonly parked: ParkedRecord | undefined
  /** Sends a prompt and streams the TanStack AI chunks of the turn. A cut turn is resumed first. */
  send(input: TurnInput): AsyncIterable<StreamChunk>
  /** Finishes an open turn by the replay rules; yields nothing when there is none, or when it still waits. */
  resume(): AsyncIterable<StreamChunk>
  /**
   * Ends the open turn as cancelled: it is not resumed. Stops a running turn first, waiting
   * at most the host's `stopTimeoutMs` for a step in flight. On a session object that parked
   * (and so let its lease go), it takes the session again for the cancel, then lets it go.
   */
  cancel(reason?: string): Promise<void>
  /**
   * Stops a running turn for a deploy (waiting at most `stopTimeoutMs` for a step in
   * flight) and lets the session go: the turn stays open and any host or worker resumes it at once.
   */
  handOff(): Promise<void>
  /** The whole log, harness and app records. */
  entries(): Promise<LogEntry[]>
  /** Releases the session for other hosts. Stops a running turn first, waiting at most `stopTimeoutMs`. */
  close(): Promise<void>
}

export interface SessionArgs {
  store: GuardedStore
  harness: Harness
  sessionId: string
  /** The folded log: this session's writer folds each append into it. */
  state: SessionFold
  /** The session's secrets (given, listed, and read before), checked before the lease was taken. */
  sessionSecrets: SessionSecrets
  secrets: Record<string, string>
  clock: Clock
  lease: Lease | undefined
  timings: RuntimeTimings
  parent: { sessionId: string; toolCallId: string } | null
  /** The readable id written in turn records; the lease's owner also names this process instance. */
  hostId: string
  /** A worker opened the session to look at it: if its agent turn finished, it wakes the parent. */
  wakeParentWhenIdle: boolean
  onClosed: () => void
  /** Opens the child session of an agent-tool call, on the same store, clock and lease owner. */
  openChild: (harness: Harness, sessionId: string, parent: { sessionId: string; toolCallId: string }) => Promise<Session>
  /** Opens this session again on the same host, with a new lease: how a parked session object still cancels its turn. */
  reopen: () => Promise<Session>
}
