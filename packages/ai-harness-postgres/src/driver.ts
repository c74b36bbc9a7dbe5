/**
 * The one seam between the store and a PostgreSQL client. The store sends the same
 * SQL text to each; this file only knows how each client runs a query and a
 * transaction. The types are structural, so the package imports neither `pg` nor
 * `@electric-sql/pglite` (both are optional peers).
 */
import { isConnectionLoss } from './transient.js'

/** A row as drivers return it: column name to value. */
export type Row = Record<string, unknown>

interface QueryResultLike {
  rows: any[]
}

/** A `pg` Pool (node-postgres): queries run on any pooled connection. */
export interface PgPoolLike {
  query(text: string, values?: any[]): Promise<QueryResultLike>
  connect(): Promise<PgPoolClientLike>
  end(): Promise<void>
  readonly totalCount: number
}

/** A connection checked out of a `pg` Pool. */
export interface PgPoolClientLike {
  query(text: string, values?: any[]): Promise<QueryResultLike>
  release(error?: Error | boolean): void
}

/** A single `pg` Client (already connected), or a PoolClient the app keeps. */
export interface PgClientLike {
  query(text: string, values?: any[]): Promise<QueryResultLike>
  end(): Promise<void>
}

/** A PGlite instance (`@electric-sql/pglite`), in-process or in a worker. */
export interface PGliteLike {
  query(text: string, params?: any[]): Promise<QueryResultLike>
  transaction<T>(callback: (tx: { query(text: string, params?: any[]): Promise<QueryResultLike> }) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** What `postgresStore({ client })` accepts. */
export type PostgresClient = PgPoolLike | PgClientLike | PGliteLike

/** Runs one statement and returns its rows. */
export interface Queryable {
  query(text: string, params?: readonly unknown[]): Promise<Row[]>
}

export interface Driver extends Queryable {
  readonly kind: 'pg-pool' | 'pg-client' | 'pglite'
  /** Runs `fn` in BEGIN … COMMIT on one connection; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /** Ends the pool or client, or closes the PGlite instance. */
  close(): Promise<void>
}

const isPGlite = (client: PostgresClient): client is PGliteLike => typeof (client as PGliteLike).transaction === 'function'
const isPool = (client: PostgresClient): client is PgPoolLike =>
  typeof (client as PgPoolLike).connect === 'function' && typeof (client as PgPoolLike).totalCount === 'number'

const rowsOf = async (result: Promise<QueryResultLike>): Promise<Row[]> => (await result).rows as Row[]
const params = (values?: readonly unknown[]) => (values === undefined ? undefined : [...values])

/** Wraps whichever client the app passed. */
export function createDriver(client: PostgresClient): Driver {
  if (isPGlite(client)) return pgliteDriver(client)
  if (isPool(client)) return poolDriver(client)
  return clientDriver(client)
}

// PGlite is one connection; it already queues queries behind an open transaction.
function pgliteDriver(db: PGliteLike): Driver {
  return {
    kind: 'pglite',
    query: (text, values) => rowsOf(db.query(text, params(values))),
    transaction: (fn) => db.transaction((tx) => fn({ query: (text, values) => rowsOf(tx.query(text, params(values))) })),
    close: () => db.close(),
  }
}

function poolDriver(pool: PgPoolLike): Driver {
  return {
    kind: 'pg-pool',
    query: (text, values) => rowsOf(pool.query(text, params(values))),
    async transaction(fn) {
      const connection = await pool.connect()
      const tx: Queryable = { query: (text, values) => rowsOf(connection.query(text, params(values))) }
      try {
        const result = await inTransaction(tx, fn)
        connection.release()
        return result
      } catch (error) {
        // A connection that lost its socket or failed its rollback is broken: the pool must drop it.
        const broken = error instanceof BrokenConnection || isConnectionLoss(error)
        connection.release(broken ? (error instanceof Error ? error : true) : undefined)
        throw error instanceof BrokenConnection ? error.cause : error
      }
    },
    close: () => pool.end(),
  }
}

// A single Client is one connection: while a transaction is open nothing else may
// run on it, or that query would join the transaction. So every call takes turns.
function clientDriver(client: PgClientLike): Driver {
  let tail: Promise<unknown> = Promise.resolve()
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => undefined)
    return run
  }
  const direct: Queryable = { query: (text, values) => rowsOf(client.query(text, params(values))) }
  return {
    kind: 'pg-client',
    query: (text, values) => serial(() => direct.query(text, values)),
    transaction: (fn) =>
      serial(async () => {
        try {
          return await inTransaction(direct, fn)
        } catch (error) {
          throw error instanceof BrokenConnection ? error.cause : error
        }
      }),
    close: () => client.end(),
  }
}

/** The transaction failed and so did its rollback: the connection is unusable. */
class BrokenConnection extends Error {
  constructor(override readonly cause: unknown) {
    super('rollback failed')
  }
}

async function inTransaction<T>(tx: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  await tx.query('BEGIN')
  let result: T
  try {
    result = await fn(tx)
  } catch (error) {
    try {
      await tx.query('ROLLBACK')
    } catch {
      throw new BrokenConnection(error)
    }
    throw error
  }
  await tx.query('COMMIT')
  return result
}
