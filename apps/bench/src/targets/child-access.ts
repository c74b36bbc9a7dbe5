import type { ChildAccess } from './child/access.js'
import type { ChildConnection } from './target.js'

/** Loads only the chosen store's client, so a child starts fast and its baseline memory is its own. */
export async function childAccess(connection: ChildConnection): Promise<ChildAccess> {
  switch (connection.store) {
    case 'memory':
      return (await import('./child/memory.js')).memoryAccess()
    case 'postgres':
      return (await import('./child/postgres.js')).postgresAccess(connection)
    case 'pglite':
      return (await import('./child/pglite.js')).pgliteAccess(connection)
    case 'dynamodb':
      return (await import('./child/dynamodb.js')).dynamoAccess(connection)
    case 's3':
      return (await import('./child/s3.js')).s3Access(connection)
  }
}
