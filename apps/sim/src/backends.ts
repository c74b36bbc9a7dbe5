import { PGlite } from '@electric-sql/pglite'
import type { SimBackend } from '@tanstack/ai-harness/testing/node'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { postgresStore } from '@tanstack/ai-harness-postgres'

/** The stores a world can run on. */
export const SIM_STORES = ['memory', 'pglite'] as const
export type SimStoreName = (typeof SIM_STORES)[number]

/** Makes each world's data set on one store: a fresh memory data set, or a fresh schema of one PGlite database. */
export interface SimBackends {
  readonly backend: () => Promise<SimBackend>
  close(): Promise<void>
}

export function simBackends(store: SimStoreName): SimBackends {
  if (store === 'memory') {
    return {
      backend: async () => {
        const data = createMemoryData()
        return { open: (clock) => memoryStore({ data, clock }) }
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
