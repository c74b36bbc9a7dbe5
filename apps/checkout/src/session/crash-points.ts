import type { HarnessStore } from '@tanstack/ai-harness'
import type { LogRecord } from '@tanstack/ai-harness/store'

/**
 * Where the first process dies:
 * - `charge-logged`: right after the charge step is in the log, before the invoice (the seed's story);
 * - `charge-unlogged`: after billing charged, before the step reached the log, so the replay calls
 *   billing again with the same idempotency key and billing refuses it;
 * - `email-logged`: right after notify's email step is in the log, before its result: the resumed
 *   call returns the stored message id, no second email goes out;
 * - `email-unlogged`: after the mailer sent (it takes no idempotency key), before the step reached
 *   the log: the resumed call asks `verify`, which finds the email in the outbox, and sends nothing;
 * - `none`: no crash.
 */
export const CRASH_POINTS = ['charge-logged', 'charge-unlogged', 'email-logged', 'email-unlogged', 'none'] as const
export type CrashPoint = (typeof CRASH_POINTS)[number]

/** What the doomed process tells its parent at the crash point. */
export interface CrashReport {
  point: Exclude<CrashPoint, 'none'>
  /** One line for humans, e.g. "charge:42 is in the log (seq 4)". */
  detail: string
  /** The last seq in the log when the process stopped, if known: the timeline marks the kill after it. */
  lastSeq: number | undefined
}

/**
 * Called at the crash point. It reports, then never resolves: the process waits right
 * there, between two side effects, until the parent's SIGKILL arrives.
 */
export type OnCrashPoint = (report: CrashReport) => Promise<never>

const STEP_PREFIX: Partial<Record<CrashPoint, string>> = { 'charge-logged': 'charge:', 'email-logged': 'send:' }

/** A store wrapped for the crash demo, and the last seq this process appended. */
export interface WatchedStore {
  readonly store: HarnessStore
  lastSeq(): number | undefined
}

/**
 * Wraps a store so that the first append that lands a matching step record calls
 * `onCrash` instead of returning: the step is durably in the store, and the tool that
 * wrote it never gets to its next side effect. It also remembers the last seq this
 * process appended, so a crash elsewhere (in billing) can say where the log ends.
 */
export function watchStore(store: HarnessStore, point: CrashPoint, onCrash: OnCrashPoint): WatchedStore {
  const prefix = STEP_PREFIX[point]
  let fired = false
  let lastSeq: number | undefined
  const matches = (record: LogRecord) => prefix !== undefined && record.type === 'harness.step' && String(record.name).startsWith(prefix)
  const watched: HarnessStore = {
    limits: store.limits,
    leases: store.leases,
    wakeups: store.wakeups,
    read: (logId, options) => store.read(logId, options),
    delete: (logId) => store.delete(logId),
    close: () => store.close?.() ?? Promise.resolve(),
    async append(logId, expectedSeq, records) {
      const result = await store.append(logId, expectedSeq, records)
      if (records.length > 0) lastSeq = expectedSeq + records.length - 1
      const step = records.find(matches)
      if (step && !fired) {
        fired = true
        return onCrash({
          point: point as CrashReport['point'],
          detail: `step ${String(step.name)} is in the log (seq ${lastSeq})`,
          lastSeq,
        })
      }
      return result
    },
  }
  return { store: watched, lastSeq: () => lastSeq }
}
