/**
 * The structural types of the clients the store accepts, and of the driver it wraps
 * them in. Structural, so the package imports neither `pg` nor `@electric-sql/pglite`
 * (both are optional peers).
 */

/** A row as drivers return it: column name to value. */
export type Row = Record<string, unknown>

export interface QueryResultLike {
  rows: any[]
}

/**
 * pg's query config: a `name` makes the server parse and plan the statement once per
 * connection; `query_timeout` makes pg give up waiting for the reply.
 */
export interface NamedQuery {
  name?: string
  text: string
  values?: any[]
  query_timeout?: number
}

/** A `pg` Pool (node-postgres): each call checks out a pooled connection. */
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
  /** pg's Client is an EventEmitter: a lost socket emits `error` on it. */
  on?(event: 'error', listener: (error: Error) => void): unknown
  removeListener?(event: 'error', listener: (error: Error) => void): unknown
}

/** A single `pg` Client (already connected), or a PoolClient the app keeps. */
export interface PgClientLike {
  query(text: string | NamedQuery, values?: any[]): Promise<QueryResultLike>
  end(): Promise<void>
}

/** A PGlite instance (`@electric-sql/pglite`), in-process or in a worker. */
export interface PGliteLike {
  query(text: string, params?: any[]): Promise<QueryResultLike>
  /** PGlite's simple-query call; used, when present, to run prepared statements in one call. */
  exec?(text: string): Promise<QueryResultLike[]>
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
  /**
   * Prepares these statements now, where preparing is dear (PGlite: a cold PREPARE costs
   * 100–250 ms), so a process that just opened the store and takes over a dead one's
   * sessions does not pay it on the way. Best effort.
   */
  warm?(texts: readonly string[]): Promise<void>
}

export interface DriverOptions {
  /** How long one network wait (a connection check-out, one statement) may take on pg, in ms. */
  readonly timeoutMs: number
}

export const isPGlite = (client: PostgresClient): client is PGliteLike => typeof (client as PGliteLike).transaction === 'function'
export const isPool = (client: PostgresClient): client is PgPoolLike =>
  typeof (client as PgPoolLike).connect === 'function' && typeof (client as PgPoolLike).totalCount === 'number'
