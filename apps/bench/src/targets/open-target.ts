import { dynamoTarget } from './dynamodb.js'
import { memoryTarget } from './memory.js'
import { pgliteTarget } from './pglite.js'
import { postgresTarget } from './postgres.js'
import { s3Target } from './s3.js'
import type { StoreName, Target } from './target.js'

/** Starts a store's backing service (when it has one) and its client, with names unique to `runId`. */
export async function openTarget(name: StoreName, runId: string, poolSize: number): Promise<Target> {
  switch (name) {
    case 'memory':
      return memoryTarget()
    case 'pglite':
      return pgliteTarget(runId)
    case 'postgres':
      return postgresTarget(runId, poolSize)
    case 'dynamodb':
      return dynamoTarget(runId)
    case 's3':
      return s3Target(runId)
  }
}
