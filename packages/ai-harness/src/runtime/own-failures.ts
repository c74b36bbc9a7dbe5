import { HarnessError } from '../contract/errors.js'

/**
 * The failures of one session's own machinery: its writer, its lease, its store, the
 * child session of one of its agent calls, and the park signals of its steps. Known by
 * identity, per session, never by code: a tool whose own code throws `LEASE_LOST` (from
 * a nested harness with its own session, or a copied check) is a tool that failed, and
 * the model gets a tool error; only these objects stop a run of this session.
 */
const failures = new WeakMap<object, WeakSet<object>>()

/** Marks `error` as a failure of `session`'s own machinery and returns it (a non-object is wrapped first). */
export function own(session: object, error: unknown): object {
  const marked =
    typeof error === 'object' && error !== null
      ? error
      : new HarnessError('STORE_UNAVAILABLE', `The store failed with a non-error value (${typeof error}).`, { cause: error })
  const set = failures.get(session) ?? new WeakSet<object>()
  failures.set(session, set)
  set.add(marked)
  return marked
}

/**
 * The failure of `session`'s own machinery in `error` or in the errors it wraps
 * (`cause`): a tool that wraps a lost write in its own error still stops the run, since
 * nothing it writes would land.
 */
export function ownFailureIn(session: object, error: unknown): object | undefined {
  const set = failures.get(session)
  if (!set) return undefined
  let current = error
  for (let depth = 0; depth < 16 && typeof current === 'object' && current !== null; depth++) {
    if (set.has(current)) return current
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Runs a call of `session`'s machinery; whatever it throws is the session's own failure. */
export async function asOwn<T>(session: object, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    throw own(session, error)
  }
}
