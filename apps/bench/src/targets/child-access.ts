import type { ChildAccess } from './child/access.js'
import type { ChildConnection } from './target.js'

/**
 * Loads only the chosen store's client, so a child starts fast and its baseline memory is its own.
 * `mark` is told when the store's modules are loaded (`store modules`) and, on PGlite, when the database is open.
 */
export async function childAccess(connection: ChildConnection, mark?: (phase: string) => void): Promise<ChildAccess> {
  switch (connection.store) {
    case 'memory':
      return (await loaded(import('./child/memory.js'), mark)).memoryAccess()
    case 'postgres':
      return (await loaded(import('./child/postgres.js'), mark)).postgresAccess(connection)
    case 'pglite':
      return (await loaded(import('./child/pglite.js'), mark)).pgliteAccess(connection, mark)
    case 'dynamodb':
      return (await loaded(import('./child/dynamodb.js'), mark)).dynamoAccess(connection)
    case 's3':
      return (await loaded(import('./child/s3.js'), mark)).s3Access(connection)
  }
}

async function loaded<T>(module: Promise<T>, mark: ((phase: string) => void) | undefined): Promise<T> {
  const loadedModule = await module
  mark?.('store modules')
  return loadedModule
}
