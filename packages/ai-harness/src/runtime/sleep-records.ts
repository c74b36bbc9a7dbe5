import type { JsonObject } from '../json/json-types.js'
import type { ParkWait } from './park-wait.js'

/** The sleep feature's part of the log: its record and how the fold keeps it in a call's journal. */

/** A durable sleep began: the wake time is kept across crashes. */
export interface SleepRecord extends JsonObject {
  type: 'harness.sleep'
  toolCallId: string
  name: string
  wakeAt: number
}

/** A call's durable sleeps: wake times by step name; absent until it logs its first sleep. */
export interface SleepJournal {
  sleeps: Map<string, number> | undefined
}

export function foldSleep(call: SleepJournal, record: SleepRecord): void {
  call.sleeps ??= new Map()
  call.sleeps.set(record.name, Number(record.wakeAt))
}

/** The call settled: its sleeps are never read again. */
export function forgetSleeps(call: SleepJournal): void {
  call.sleeps = undefined
}

/** The sleep feature's wakeup rule: a sleeping call is due at its wake time. */
export function sleepWait(until: number | null): ParkWait {
  // A sleep always logs its wake time; a park without one waits, never due, as an unknown reason does.
  return until === null ? { kind: 'person', open: false } : { kind: 'time', at: until }
}
