import assert from 'node:assert/strict'
import {
  type Clock,
  createManualClock,
  type HarnessStore,
  type LogEntry,
  type LogRecord,
  type ManualClock,
  type StoreLimits,
  type StoreRetryOptions,
} from '@tanstack/ai-harness/store'
import type { ConformanceOptions, SkipKey, WriteFault } from './options.js'
import type { RacerProcess } from './processes/racer-pool.js'

/** Another namespace a case opened next to its own: a second, independent data set. */
export interface NamespaceContext {
  readonly namespace: string
  /** The first store instance on that namespace. */
  readonly store: HarnessStore
  /** Another instance on that namespace. */
  openStore(): Promise<HarnessStore>
  /** The raw bytes of that namespace (only in cases that require 'dump'). */
  dump(): Promise<string>
}

/** What one case gets: fresh stores on its own namespace and its own clock. */
export interface CaseContext extends NamespaceContext {
  readonly clock: ManualClock
  readonly options: ConformanceOptions
  /** The limits the store declares (checked against `options.limits` and `MIN_STORE_LIMITS`). */
  readonly limits: StoreLimits
  /** The longest log id the store keeps: its declared `maxLogIdBytes`, or the default. */
  readonly maxLogIdBytes: number
  /**
   * A writer for a race: another instance on the case's namespace, in another process
   * when the run has `processes`, else in this process.
   */
  openRacer(): Promise<HarnessStore>
  /**
   * A racer process of the run (`processes`), with a store of its own on the case's
   * namespace, that runs stream resumes and locks itself; undefined without `processes`.
   */
  openRacerProcess(): Promise<RacerProcess | undefined>
  /**
   * Opens a store on a second, fresh namespace; closed and cleaned up with the case. With
   * `name` (letters, digits and `_`, at most 44 characters, from {@link CaseContext.freshRoot}),
   * the namespace is exactly that: the isolation cases open namespaces that prefix each
   * other or differ only in case.
   */
  openNamespace(name?: string): Promise<NamespaceContext>
  /** A fresh, unique namespace stem of 24 characters (`c`, 16 hex digits, `_iso…`) to derive related namespaces from. */
  freshRoot(): string
  /**
   * Another instance on the case's namespace whose clock runs `offsetMs` ahead of the
   * case's clock (behind when negative): a host whose clock is off. It follows the case's
   * clock as it advances.
   */
  openSkewedStore(offsetMs: number): Promise<HarnessStore>
  /** Writers in race cases (at least 2). */
  readonly concurrency: number
  /**
   * A store instance on the case's namespace, built by `createStore` with `faults` and
   * `retry` in its context so its client fails on cue (`options.faults`; only the retry
   * cases call it): `onAppendWrite` decides each write of an append's batch, `injected`
   * hears each error the client made up.
   */
  openFaultyStore(faults: {
    retry: StoreRetryOptions
    onAppendWrite: () => WriteFault | undefined
    injected: (error: unknown) => void
  }): Promise<HarnessStore>
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

/** Deep equality with a message that names what differs and shows both sides (cut to a readable length). */
export function assertSame(actual: unknown, expected: unknown, what: string): void {
  try {
    assert.deepStrictEqual(actual, expected)
  } catch {
    const show = (value: unknown) => {
      const text = JSON.stringify(value) ?? String(value)
      return text.length > 400 ? `${text.slice(0, 400)}…` : text
    }
    assert.fail(`${what}: got ${show(actual)}, expected ${show(expected)}`)
  }
}

/**
 * The first append to a log that must be new. A LOG_CONFLICT here means the store
 * already holds a log under that id: it merged two ids that must stay apart.
 */
export async function appendToNewLog(store: HarnessStore, logId: string, records: LogRecord[], why: string): Promise<void> {
  try {
    await store.append(logId, 1, records)
  } catch (error) {
    if ((error as { code?: string }).code !== 'LOG_CONFLICT') throw error
    assert.fail(`log ${JSON.stringify(logId)} already holds records before its first append: ${why}`)
  }
}

/** `count` small records of type `type`, each tagged so a reader can tell batches apart. */
export function records(count: number, tag: string, type = 'test.record'): LogRecord[] {
  return Array.from({ length: count }, (_, i) => ({ type, tag, i }))
}

/**
 * Checks one page against the paging rule: dense from `after + 1`, at most `limit`, and
 * not empty while `available` entries exist after `after` (when the caller knows it).
 */
export function checkPage(page: readonly LogEntry[], after: number, limit: number | undefined, what: string, available?: number): void {
  assert.ok(Array.isArray(page), `${what}: read must return an array of entries`)
  if (limit !== undefined) assert.ok(page.length <= limit, `${what}: a page of ${page.length} entries for limit ${limit}`)
  page.forEach((entry, i) => {
    assert.equal(
      entry?.seq,
      after + 1 + i,
      `${what}: entry ${i} of the page after ${after} has seq ${entry?.seq}, not ${after + 1 + i} (pages are dense from after + 1)`,
    )
  })
  if (available !== undefined && available > 0 && (limit === undefined || limit > 0)) {
    assert.ok(page.length > 0, `${what}: an empty page after ${after} while ${available} entries follow (only an empty page ends a log)`)
  }
}

/**
 * Reads a log from `after` to its end, page by page, as the paging rule says a reader
 * must: pages of at most `limit` (when given), possibly shorter, until an empty page.
 * Checks each page (dense, ascending, within the limit).
 */
export async function readFrom(
  store: HarnessStore,
  logId: string,
  after = 0,
  limit?: number,
  what = `log ${JSON.stringify(logId)}`,
): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 200_000, `${what}: reading never reached an empty page`)
    const from = after + out.length
    const page = await store.read(logId, limit === undefined ? { after: from } : { after: from, limit })
    checkPage(page, from, limit, what)
    if (page.length === 0) return out
    out.push(...page)
  }
}

/** Every record of a log, read page by page to its end (dense seqs from 1). */
export async function readLog(store: HarnessStore, logId: string): Promise<LogRecord[]> {
  return (await readFrom(store, logId)).map((entry) => entry.record)
}

export function newClock(): ManualClock & Clock {
  return createManualClock(Date.UTC(2026, 0, 1))
}

/** The error of a case whose store broke the promise rule: it says that, not what the case expected. */
export class SyncThrowError extends Error {
  constructor(method: string, thrown: unknown) {
    super(
      `${method} threw synchronously; a store method must return a rejected promise (declare it async, or return Promise.reject(error)). It threw: ${String((thrown as Error)?.message ?? thrown)}`,
      { cause: thrown },
    )
    this.name = 'SyncThrowError'
  }
}

const GUARDED: Record<string, readonly string[]> = {
  '': ['append', 'read', 'delete', 'now'],
  leases: ['acquire', 'renew', 'release', 'orphans'],
  wakeups: ['schedule', 'cancel', 'due', 'claim', 'watch'],
  sessions: ['list', 'waiting'],
}

/**
 * The store as the case sees it: every contract method must return a promise. A method
 * that throws synchronously (or returns something else) is recorded in `broken` and the
 * call throws an error that says so, so the case fails with that message instead of
 * with the code it expected from a rejection.
 */
export function guardStore(store: HarnessStore, broken: Error[]): HarnessStore {
  // A plain object of the contract's members, each called on the store itself (a class
  // with private fields keeps working).
  const wrap = <T extends object>(target: T, group: string): T => {
    const out: Record<string, unknown> = {}
    for (const name of GUARDED[group]!) {
      const method = (target as Record<string, unknown>)[name]
      if (typeof method !== 'function') continue
      const label = group ? `${group}.${name}` : name
      out[name] = (...args: unknown[]) => {
        let result: unknown
        try {
          result = method.apply(target, args)
        } catch (thrown) {
          const error = new SyncThrowError(label, thrown)
          broken.push(error)
          throw error
        }
        if (typeof (result as { then?: unknown } | null)?.then !== 'function') {
          const error = new Error(`${label} returned ${typeof result}, not a promise; every store method returns a promise.`)
          broken.push(error)
          throw error
        }
        return result
      }
    }
    return out as T
  }
  const guarded = wrap(store, '') as HarnessStore & Record<string, unknown>
  return Object.assign(guarded, {
    limits: store.limits,
    leases: store.leases && wrap(store.leases, 'leases'),
    wakeups: store.wakeups && wrap(store.wakeups, 'wakeups'),
    sessions: store.sessions && wrap(store.sessions, 'sessions'),
    close: async () => {
      await store.close?.()
    },
  })
}
