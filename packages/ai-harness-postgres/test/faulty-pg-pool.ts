import type { FaultyStoreContext } from '@tanstack/ai-harness-conformance'
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
        async query(config: string | NamedQuery, values?: unknown[]) {
          const fault = plan(typeof config === 'string' ? config : config.text)
          if (fault?.when === 'before') throw fault.error
          const result = await client.query(config as string, values)
          if (fault?.when === 'after') throw fault.error
          return result
        },
        release: (error) => client.release(error),
        on: (event, listener) => client.on(event, listener),
        removeListener: (event, listener) => client.removeListener(event, listener),
      }
    },
  }
}
