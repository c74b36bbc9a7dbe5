/**
 * What every operation of the store shares: the driver, the statements, the limits,
 * the time to compare leases and wakeups against, and `run`, which retries transient
 * failures and turns what is left into typed errors.
 */
import { type Clock, HarnessError, isHarnessError, type StoreLimits, type StoreRetryOptions, withRetry } from '@tanstack/ai-harness/store'
import type { Driver } from './driver-types.js'
import type { Liveness } from './liveness.js'
import type { Statements, TableNames } from './sql.js'

export interface StoreContext {
  readonly driver: Driver
  readonly sql: Statements
  readonly limits: StoreLimits
  /** This instance as a lease holder: its holder id, and whether it can still prove it is alive. */
  readonly liveness: Liveness
  /**
   * The time parameter of the lease and wakeup statements: the injected clock's time
   * in whole ms, or null, which makes the statement read the server's clock.
   */
  clockParam(): number | null
  /** Runs one unit of work, retrying it whole on transient failures; conflicts pass straight through. */
  run<T>(what: string, work: () => Promise<T>): Promise<T>
}

export const sqlStateOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

export function createContext(options: {
  driver: Driver
  sql: Statements
  names: TableNames
  limits: StoreLimits
  liveness: Liveness
  clock: Clock | undefined
  retry: StoreRetryOptions | undefined
  isTransient: (error: unknown) => boolean
}): StoreContext {
  const { names, isTransient, clock } = options

  function explain(error: unknown, what: string): unknown {
    const state = sqlStateOf(error)
    if (state === '42P01' || state === '3F000' || state === '42703') {
      return new HarnessError(
        'STORE_UNAVAILABLE',
        `The harness tables in schema ${names.schema} (prefix "${names.prefix}") are missing or out of date during ${what}. Call await store.migrate() once before using the store.`,
        { cause: error },
      )
    }
    return error
  }

  return {
    driver: options.driver,
    sql: options.sql,
    limits: options.limits,
    liveness: options.liveness,
    clockParam() {
      if (!clock) return null
      const now = clock.now()
      if (typeof now !== 'number' || !Number.isFinite(now)) {
        throw new HarnessError('INVALID_ARGUMENT', `clock.now() must return a finite number of ms since the epoch, not ${String(now)}.`)
      }
      return Math.floor(now)
    },
    async run(what, work) {
      try {
        return await withRetry(work, { ...options.retry, isTransient })
      } catch (error) {
        if (isHarnessError(error)) throw error
        if (!isTransient(error)) throw explain(error, what)
        throw new HarnessError(
          'STORE_UNAVAILABLE',
          `PostgreSQL kept failing during ${what} with a transient error (${String((error as Error)?.message ?? error)}). ` +
            'Check that the database is up and reachable; for an append, read the log back before deciding to write again.',
          { cause: error },
        )
      }
    },
  }
}
