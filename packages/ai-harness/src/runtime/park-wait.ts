/**
 * What a parked call waits for, as the feature that parked it reads its part of the log.
 * Each feature gives its own rule beside its records (`sleepWait` in sleep-records.ts,
 * `askWait` in ask-records.ts, `approvalWait` in approval-records.ts); `WakeupPolicy` turns
 * the answer into the session's one wakeup.
 *
 * - `time`: due at `at` (a sleep's wake time);
 * - `person`: waits for a person while `open` (a question without an answer, an approval
 *   not yet decided); its wakeup is the never-due `WAITING_FOR_PERSON`, so stores list it;
 * - `child`: waits for its child session, which wakes it when its turn ends: no wakeup.
 */
export type ParkWait =
  | { readonly kind: 'time'; readonly at: number }
  | { readonly kind: 'person'; readonly open: boolean }
  | { readonly kind: 'child' }

/**
 * The agent feature's rule: an agent tool's call waits for its child session, whose
 * finished turn wakes the parent (the agent feature has no records of its own: the child
 * is a session with a log of its own, linked by its id).
 */
export const agentWait = (): ParkWait => ({ kind: 'child' })

/** A park reason no feature of this build knows (a newer build's log): it waits for a person, never due. */
export const unknownWait = (): ParkWait => ({ kind: 'person', open: false })
