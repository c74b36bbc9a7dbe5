/**
 * The one seam between the store and a PostgreSQL client. The store sends the same
 * SQL text to each; the drivers (`pg-driver.ts`, `pglite-driver.ts`) only know how each
 * client runs a statement and a transaction.
 */
import { type Driver, type DriverOptions, isPGlite, isPool, type PgClientLike, type PostgresClient } from './driver-types.js'
import { pgClientDriver, pgPoolDriver } from './pg-driver.js'
import { pgliteDriver } from './pglite-driver.js'

/** Wraps whichever client the app passed. */
export function createDriver(client: PostgresClient, options: DriverOptions): Driver {
  if (isPGlite(client)) return pgliteDriver(client)
  if (isPool(client)) return pgPoolDriver(client, options)
  return pgClientDriver(client as PgClientLike, options)
}
