import assert from 'node:assert/strict'
import { type Clock, createManualClock, type HarnessStore, type LogRecord, type ManualClock } from '@tanstack/ai-harness'
import type { ConformanceOptions, SkipKey } from './options.js'

/** What one case gets: fresh stores on its own namespace and its own clock. */
export interface CaseContext {
  readonly namespace: string
  readonly clock: ManualClock
  readonly options: ConformanceOptions
  /** The first store instance of the case. */
  readonly store: HarnessStore
  /** Opens another instance on the same namespace: another "process". */
  openStore(): Promise<HarnessStore>
  /** The raw bytes of the namespace (only in cases that require 'dump'). */
  dump(): Promise<string>
  /** Concurrency for race cases. */
  readonly concurrency: number
}

export interface ConformanceCase {
  /** Stable id, e.g. `log.append.stale`. Tests and CI refer to cases by it. */
  readonly id: string
  /** One sentence: the guarantee the case proves. */
  readonly title: string
  /** Capabilities the case needs; a store without them fails unless it declared the skip. */
  readonly requires?: readonly SkipKey[]
  run(context: CaseContext): Promise<void>
}

export function defineCase(c: ConformanceCase): ConformanceCase {
  return c
}

/** Awaits `promise` and asserts it rejects with an error whose `code` is `code`. */
export async function expectCode<E = unknown>(promise: Promise<unknown>, code: string, what: string): Promise<E> {
  let error: unknown
  try {
    await promise
  } catch (caught) {
    error = caught
  }
  assert.ok(error !== undefined, `${what}: expected an error with code ${code}, but it resolved`)
  const actual = (error as { code?: unknown }).code
  assert.equal(actual, code, `${what}: expected code ${code}, got ${String(actual)} (${String((error as Error)?.message)})`)
  return error as E
}

/** `count` small records of type `type`, each tagged so a reader can tell batches apart. */
export function records(count: number, tag: string, type = 'test.record'): LogRecord[] {
  return Array.from({ length: count }, (_, i) => ({ type, tag, i }))
}

/** Reads all of a log with the store's read, no paging. */
export async function readLog(store: HarnessStore, logId: string): Promise<LogRecord[]> {
  const entries = await store.read(logId)
  for (const [index, entry] of entries.entries()) assert.equal(entry.seq, index + 1, `seq of entry ${index} in ${logId}`)
  return entries.map((entry) => entry.record)
}

export function newClock(): ManualClock & Clock {
  return createManualClock(Date.UTC(2026, 0, 1))
}
