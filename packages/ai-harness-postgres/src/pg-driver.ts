/**
 * node-postgres: a Pool or a single Client. Every statement with parameters goes as a
 * named (prepared) statement, so the server parses and plans it once per connection, and
 * every network wait has a deadline, so a half-open connection cannot hang a call.
 */
import { settleWithin } from '@tanstack/ai-harness/store'
import type { Driver, DriverOptions, NamedQuery, PgClientLike, PgPoolClientLike, PgPoolLike, Queryable, Row } from './driver-types.js'
import { statementNamer } from './statement-name.js'
import { BrokenConnection, inTransaction } from './transaction.js'
import { isConnectionLoss } from './transient.js'

/**
 * No answer within the store's `timeoutMs`. A transient failure (its code is Node's
 * `ETIMEDOUT`): the connection is dropped, and the call is retried per the retry options.
 */
export class DeadlineExceededError extends Error {
  readonly code = 'ETIMEDOUT'

  constructor(what: string, timeoutMs: number) {
    super(`PostgreSQL gave no answer to ${what} within ${timeoutMs} ms (the store's timeoutMs)`)
    this.name = 'DeadlineExceededError'
  }
}

/**
 * Runs statements on one connection: with parameters as a named (prepared) statement,
 * and pg gives up on the reply after `query_timeout` ms ("Query read timeout").
 */
function on(client: PgPoolClientLike | PgClientLike, timeoutMs: number, nameOf: (text: string) => string): Queryable {
  return {
    async query(text, values) {
      const config: NamedQuery =
        values === undefined
          ? { text, query_timeout: timeoutMs }
          : { name: nameOf(text), text, values: [...values], query_timeout: timeoutMs }
      return (await client.query(config)).rows as Row[]
    },
  }
}

/** `work`, or a DeadlineExceededError after `timeoutMs` (the core's one store deadline). */
function within<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  return settleWithin(work, timeoutMs, () => new DeadlineExceededError(what, timeoutMs))
}

/** Checks out a connection, or fails after `timeoutMs`; a connection that arrives later goes back unused. */
async function connectWithin(pool: PgPoolLike, timeoutMs: number): Promise<PgPoolClientLike> {
  const connecting = pool.connect()
  try {
    return await within(connecting, timeoutMs, 'a connection check-out')
  } catch (error) {
    connecting.then(
      (late) => late.release(),
      () => undefined,
    )
    throw error
  }
}

const ignoreSocketError = (): void => undefined

export function pgPoolDriver(pool: PgPoolLike, { timeoutMs }: DriverOptions): Driver {
  const nameOf = statementNamer()
  async function onConnection<T>(fn: (connection: Queryable) => Promise<T>): Promise<T> {
    const connection = await connectWithin(pool, timeoutMs)
    // pg-pool listens for `error` only on idle connections: a socket lost while one is
    // checked out would be an unhandled 'error' event, which ends the process. The
    // query in flight fails with it anyway, so the event itself carries nothing more.
    connection.on?.('error', ignoreSocketError)
    try {
      const result = await fn(on(connection, timeoutMs, nameOf))
      connection.removeListener?.('error', ignoreSocketError)
      connection.release()
      return result
    } catch (error) {
      // A connection that lost its socket, missed its deadline or failed its rollback is
      // broken: released with the error, the pool ends it (pg destroys the socket of a
      // connection with a query still in flight). Any other error leaves it healthy.
      const broken = error instanceof BrokenConnection || isConnectionLoss(error)
      // A broken one keeps the listener: its socket may still report errors as it closes.
      if (!broken) connection.removeListener?.('error', ignoreSocketError)
      connection.release(broken ? (error instanceof Error ? error : true) : undefined)
      throw error instanceof BrokenConnection ? error.cause : error
    }
  }
  return {
    kind: 'pg-pool',
    query: (text, values) => onConnection((connection) => connection.query(text, values)),
    transaction: (fn) => onConnection((connection) => inTransaction(connection, fn)),
    // A connection attempt the server never answers keeps pool.end() waiting: bounded too.
    close: () => within(pool.end(), timeoutMs, 'ending the pool'),
  }
}

// A single Client is one connection: while a transaction is open nothing else may
// run on it, or that query would join the transaction. So every call takes turns.
// A statement past its deadline fails, but the connection stays busy with it (pg keeps
// it); later calls then fail their deadlines too, so use a Pool, which replaces it.
export function pgClientDriver(client: PgClientLike, { timeoutMs }: DriverOptions): Driver {
  let tail: Promise<unknown> = Promise.resolve()
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn)
    tail = run.catch(() => undefined)
    return run
  }
  const direct = on(client, timeoutMs, statementNamer())
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
    close: () => within(client.end(), timeoutMs, 'ending the client'),
  }
}
