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

/** pg's query config: a `name` makes the server parse and plan the statement once per connection. */
interface NamedQuery {
  name: string
  text: string
  values?: any[]
}

/** A `pg` Pool (node-postgres): queries run on any pooled connection. */
export interface PgPoolLike {
  query(text: string | NamedQuery, values?: any[]): Promise<QueryResultLike>
  connect(): Promise<PgPoolClientLike>
  end(): Promise<void>
  readonly totalCount: number
}

/** A connection checked out of a `pg` Pool. */
export interface PgPoolClientLike {
  query(text: string | NamedQuery, values?: any[]): Promise<QueryResultLike>
  release(error?: Error | boolean): void
}

/** A single `pg` Client (already connected), or a PoolClient the app keeps. */
export interface PgClientLike {
  query(text: string | NamedQuery, values?: any[]): Promise<QueryResultLike>
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

/**
 * Every statement with parameters goes to pg as a named (prepared) statement, so the
 * server parses and plans it once per connection instead of on every step. The name is
 * a hash of the text: the store's statements embed the schema, so each schema gets its own.
 */
const named = (text: string, values?: readonly unknown[]): string | NamedQuery =>
  values === undefined ? text : { name: `ah_${fnv1a(text)}`, text, values: [...values] }

function fnv1a(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(36) + text.length.toString(36)
}

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
    query: (text, values) => rowsOf(pool.query(named(text, values))),
    async transaction(fn) {
      const connection = await pool.connect()
      const tx: Queryable = { query: (text, values) => rowsOf(connection.query(named(text, values))) }
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
  const direct: Queryable = { query: (text, values) => rowsOf(client.query(named(text, values))) }
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
