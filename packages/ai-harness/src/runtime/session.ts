import type { StreamChunk } from '@tanstack/ai'
import { HarnessError } from '../contract/errors.js'
import type { Clock, Lease, LogEntry } from '../contract/types.js'
import { SecretScanner } from '../secrets/secret-scanner.js'
import type { Harness } from './harness.js'
import type { LoggedMessage, ParkedRecord } from './records.js'
import type { SessionState } from './session-fold.js'
import type { GuardedStore } from './store-boundary.js'
import type { RuntimeTimings } from './timings.js'

/** A prompt: text, or TanStack AI model messages. */
export type TurnInput = string | LoggedMessage | LoggedMessage[]

/** What a session is doing, as far as this host knows. */
export type SessionStatus = 'idle' | 'running' | 'cut' | 'parked' | 'closed'

/** An open session: one host drives it until `close()`. */
export interface Session {
  readonly id: string
  readonly harness: Harness
  /** True when the session's last turn is open: cut by a crash, stopped for a deploy, or waiting. */
  readonly needsRecovery: boolean
  readonly status: SessionStatus
  /** Why the open turn waits (a long sleep, a question), if it does. */
  readonly parked: ParkedRecord | undefined
  /** Sends a prompt and streams the TanStack AI chunks of the turn. A cut turn is resumed first. */
  send(input: TurnInput): AsyncIterable<StreamChunk>
  /** Finishes an open turn by the replay rules; yields nothing when there is none, or when it still waits. */
  resume(): AsyncIterable<StreamChunk>
  /**
   * Ends the open turn as cancelled: it is not resumed. Stops a running turn first, waiting
   * at most the host's `stopTimeoutMs` for a step in flight.
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
  state: SessionState
  scanner: SecretScanner
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
}

/** The secrets of a session, checked before anything is written. */
export function sessionScanner(secrets: Record<string, string>): SecretScanner {
  const scanner = new SecretScanner()
  for (const [name, value] of Object.entries(secrets)) {
    try {
      scanner.add(value)
    } catch (error) {
      throw new HarnessError('SECRET_TOO_SHORT', `Secret ${JSON.stringify(name)}: ${(error as Error).message}`)
    }
  }
  return scanner
}
