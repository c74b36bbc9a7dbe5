import { type FaultyStoreContext, sendWithFault } from '@tanstack/ai-harness-conformance'
import type pg from 'pg'
import type { NamedQuery, PgPoolClientLike, PgPoolLike } from '../src/driver-types.js'
import { appendFaultPlan } from './faulty-pglite.js'

/**
 * A `pg` Pool whose appends fail as `context` says: each connection it hands out runs
 * its statements on a real connection of `pool`, failing an append's statement before it
 * is sent or after it ran (a lost reply). The store sees a Pool like any other.
 */
export function failAppendWritesOnPool(pool: pg.Pool, context: FaultyStoreContext): PgPoolLike {
  const plan = appendFaultPlan(context)
  return {
    get totalCount() {
      return pool.totalCount
    },
    query: (text, values) => pool.query(text as string, values),
    end: () => pool.end(),
    async connect(): Promise<PgPoolClientLike> {
      const client = await pool.connect()
      return {
        query: (config: string | NamedQuery, values?: unknown[]) =>
          sendWithFault(plan(typeof config === 'string' ? config : config.text), () => client.query(config as string, values)),
        release: (error) => client.release(error),
        on: (event, listener) => client.on(event, listener),
        removeListener: (event, listener) => client.removeListener(event, listener),
      }
    },
  }
}
