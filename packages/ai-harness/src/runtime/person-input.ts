import { HarnessError, isHarnessError } from '../contract/errors.js'
import { prepareBatch } from '../contract/prepare-batch.js'
import type { Clock, LogRecord } from '../contract/types.js'
import { resolvableSecrets } from '../secrets/session-secrets.js'
import type { SecretScanner } from '../secrets/secret-scanner.js'
import { agentMetaOf } from './agent-tool.js'
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
    // A record the store refuses (RECORD_TOO_LARGE) is refused before the wakeup moves:
    // the session must stay where it waits (WAITING_FOR_PERSON, on the waiting list).
    prepareBatch([record], store.limits)
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

/** What a host knows to check a person's input against: its harnesses, and the secrets of the sessions it has open. */
export interface PersonInputRules {
  readonly harnesses: readonly Harness[]
  /** The scanners of this host's open session objects of `sessionId` (the secrets given to `host.open`). */
  readonly openSecrets: (sessionId: string) => readonly SecretScanner[]
}

/** Finds a secret in a value, as `SecretScanner.find` does. */
export type SecretFinder = Pick<SecretScanner, 'find'>

/**
 * The secrets of the session `state` folds that person input must not hold: those its
 * harness resolves (`secretNames`, and names its tools read) and those given to
 * `host.open` for a session object of this host that is still open. A host that does
 * not run the session's harness cannot know its rules: it refuses the input
 * (CAPABILITY_MISSING, nothing written) instead of letting it through unchecked.
 */
export async function secretsOf(rules: PersonInputRules, sessionId: string, state: SessionState): Promise<SecretFinder> {
  const harness = state.harness === undefined ? undefined : harnessNamed(rules.harnesses, state.harness)
  if (state.harness !== undefined && !harness) {
    throw new HarnessError(
      'CAPABILITY_MISSING',
      `This host does not run harness ${JSON.stringify(state.harness)}, so it cannot check the input against that session's secrets (the harness's secretNames and resolveSecret); nothing was written. Send it through a host created with that harness: createHost({ store, harnesses: [${state.harness}] }).`,
    )
  }
  const scanners = [await resolvableSecrets(harness, state.secretNames), ...rules.openSecrets(sessionId)]
  return {
    find: (value, root) => {
      for (const scanner of scanners) {
        const found = scanner.find(value, root)
        if (found) return found
      }
      return null
    },
  }
}

/**
 * The harness of that name among `harnesses` and the child harnesses of their agent tools, at
 * any depth: a child session is made by a harness the host runs through its parent's tool.
 */
export function harnessNamed(harnesses: readonly Harness[], name: string): Harness | undefined {
  const seen = new Set<Harness>()
  const queue = [...harnesses]
  for (let harness = queue.shift(); harness; harness = queue.shift()) {
    if (seen.has(harness)) continue
    seen.add(harness)
    if (harness.name === name) return harness
    for (const tool of harness.tools) {
      const child = agentMetaOf(tool)?.harness
      if (child) queue.push(child)
    }
  }
  return undefined
}

async function wake(store: GuardedStore, clock: Clock, sessionId: string): Promise<void> {
  await store.wakeups?.schedule(sessionId, await durableNow(store, clock))
}
