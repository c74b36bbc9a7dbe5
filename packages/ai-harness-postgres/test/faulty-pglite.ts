import type { PGlite } from '@electric-sql/pglite'
import { appendWriteFault, type FaultyStoreContext, type RequestFault, sendWithFault } from '@tanstack/ai-harness-conformance'
import type { PGliteLike } from '../src/index.js'

/** An error shaped as `pg` shapes them: a message and a SQLSTATE (or Node socket) code. */
export const pgError = (code: string, message = `failed with ${code}`) => Object.assign(new Error(message), { code })

export type Fault = RequestFault

/**
 * A client over `db` that fails on cue: `plan` sees each statement and may fail it before
 * it runs (nothing happened) or after (it happened, but the reply was lost). The store
 * prepares its statements on PGlite (`PREPARE name AS …`, then `EXECUTE name(…)`): `plan`
 * and `calls` see an EXECUTE as the text of the statement it runs, and a PREPARE not at all.
 */
export function faultyClient(db: PGlite, plan: (text: string) => Fault | undefined): PGliteLike & { calls: string[] } {
  const calls: string[] = []
  const prepared = new Map<string, string>()
  const query = async <T extends { rows: any[] }>(sent: string, run: () => Promise<T>): Promise<T> => {
    const preparing = /^PREPARE (\w+) AS ([\s\S]*)$/.exec(sent)
    if (preparing) {
      prepared.set(preparing[1]!, preparing[2]!)
      return run()
    }
    const text = prepared.get(/^EXECUTE (\w+)/.exec(sent)?.[1] ?? '') ?? sent
    calls.push(text)
    return sendWithFault(plan(text), run)
  }
  return {
    calls,
    query: (text, params) => query(text, () => db.query(text, params)),
    transaction: (callback) => db.transaction((tx) => callback({ query: (text, params) => query(text, () => tx.query(text, params)) })),
    close: async () => {},
  }
}

export const isAppend = (text: string) => text.includes('INSERT INTO') && text.includes('log_entries')
/** The first round of a delete: the lease, the wakeup and the entries. */
export const isDeleteLog = (text: string) => text.includes('DELETE FROM') && text.includes('log_entries') && text.includes('leases')

/** PostgreSQL's own retryable error: a serialization failure. */
const serializationFailure = () => pgError('40001', 'could not serialize access (injected)')

/** What to do to a statement so that the writes of an append's batch fail as `context` says (see `appendWriteFault`). */
export function appendFaultPlan(context: FaultyStoreContext): (text: string) => Fault | undefined {
  return (text) => (isAppend(text) ? appendWriteFault(context, serializationFailure) : undefined)
}

/** A PGlite client over `db` whose appends fail as `context` says (see {@link appendFaultPlan}). */
export function failAppendWrites(db: PGlite, context: FaultyStoreContext): PGliteLike {
  return faultyClient(db, appendFaultPlan(context))
}
