import { PGlite } from '@electric-sql/pglite'
import { unfencedAppends } from '@tanstack/ai-harness/testing'
import type { SimBackend } from '@tanstack/ai-harness/testing/node'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { postgresStore } from '@tanstack/ai-harness-postgres'
import { dynamoBackends, type S3SimTarget, s3Backends } from './networked.js'

/**
 * The stores a world can run on. `memory-unfenced` is the memory store with appends that
 * ignore the writer's lease, as DynamoDB's and S3's do: only the seq guards the log, so the
 * runtime's own rules (one driver per session in a process) are all that keeps two runs apart.
 */
export const SIM_STORES = ['memory', 'memory-unfenced', 'pglite', 'dynamodb', 's3'] as const
export type SimStoreName = (typeof SIM_STORES)[number]

/** Makes each world's data set on one store: a fresh memory data set, or a fresh schema of one PGlite database. */
export interface SimBackends {
  readonly backend: () => Promise<SimBackend>
  close(): Promise<void>
}

/** The S3 target of the environment (`S3_ENDPOINT`, `S3_BUCKET`), if any. */
export function s3TargetFromEnv(): S3SimTarget | undefined {
  const { S3_ENDPOINT: endpoint, S3_BUCKET: bucket } = process.env
  return endpoint && bucket ? { endpoint, bucket } : undefined
}

export function simBackends(store: SimStoreName, s3Target: S3SimTarget | undefined = s3TargetFromEnv()): SimBackends {
  if (store === 'dynamodb') return dynamoBackends()
  if (store === 's3') return s3Backends(s3Target)
  if (store === 'memory' || store === 'memory-unfenced') {
    const fenced = store === 'memory'
    return {
      backend: async () => {
        const data = createMemoryData()
        return { open: (clock) => (fenced ? memoryStore({ data, clock }) : unfencedAppends(memoryStore({ data, clock }))) }
      },
      close: async () => {},
    }
  }
  let db: PGlite | undefined
  let worlds = 0
  return {
    backend: async () => {
      db ??= new PGlite()
      const client = db
      const schema = `sim_${process.pid}_${++worlds}`
      // Every process of the world reads leases and wakeups with its own (skewed) clock, as memory does across processes.
      await postgresStore({ client, schema }).migrate()
      return {
        open: (clock) => postgresStore({ client, schema, clock }),
        close: async () => {
          await client.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
        },
      }
    },
    close: async () => {
      await db?.close()
    },
  }
}
