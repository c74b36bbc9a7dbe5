import { HarnessError, isHarnessError } from '../contract/errors.js'
import type { Clock, LogRecord } from '../contract/types.js'
import { resolvableSecrets } from '../secrets/session-secrets.js'
import type { SecretScanner } from '../secrets/secret-scanner.js'
import type { Harness } from './harness.js'
import { readAndFold, type SessionState } from './session-fold.js'
import { durableNow, type GuardedStore, isOutcomeUnknown } from './store-boundary.js'

/** Reads of the log per call before it gives up with SESSION_BUSY. */
const ATTEMPTS = 5

/**
 * Logs what a person sent to a session that waits for them (an answer, a decision on an
 * approval) and makes the session due at once. Each attempt reads the log and lets
 * `decide` look at it: it throws when the input does not fit, returns `undefined` when
 * the log holds this very input already (a reply lost after the append landed, or a
 * retry: a success), or returns the record to log. The session is made due before the
 * append too, so a crash between the two never leaves logged input with nothing to wake
 * its session (a worker that finds nothing new only parks it again); a conflict or an
 * unknown outcome reads the log again and decides anew.
 */
export async function logPersonInput(
  store: GuardedStore,
  clock: Clock,
  sessionId: string,
  doing: string,
  decide: (state: SessionState) => Promise<LogRecord | undefined>,
): Promise<void> {
  let failure: unknown
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const state = await readAndFold(store, sessionId)
    const record = await decide(state)
    if (record === undefined) return wake(store, clock, sessionId)
    await wake(store, clock, sessionId)
    try {
      await store.append(sessionId, state.nextSeq, [record])
    } catch (error) {
      // Someone else wrote meanwhile (maybe the same input), or nobody knows whether ours landed: read again and decide.
      if (isHarnessError(error, 'LOG_CONFLICT') || isOutcomeUnknown(error)) {
        failure = error
        continue
      }
      throw error
    }
    return wake(store, clock, sessionId)
  }
  if (isOutcomeUnknown(failure)) throw failure
  throw new HarnessError('SESSION_BUSY', `Session ${JSON.stringify(sessionId)} kept changing while ${doing}; try again.`)
}

/** The secrets of the session `state` folds, as its harness resolves them: what person input must not hold. */
export function secretsOf(harnesses: readonly Harness[], state: SessionState): Promise<SecretScanner> {
  return resolvableSecrets(
    harnesses.find((h) => h.name === state.harness),
    state.secretNames,
  )
}

async function wake(store: GuardedStore, clock: Clock, sessionId: string): Promise<void> {
  await store.wakeups?.schedule(sessionId, await durableNow(store, clock))
}
