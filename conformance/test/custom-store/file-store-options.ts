import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ConformanceOptions, StoreContext } from '@tanstack/ai-harness-conformance'
import { type FileStoreOptions, fileStore } from './file-store.js'

/** The folder of a namespace: the same in this process and in every racer process. */
export const dirOf = (namespace: string) => join(tmpdir(), 'ai-harness-file-store', namespace)

/** What the racers of a run open: the same store, on a slow disk so their changes overlap. */
export const racerStore =
  (overrides: Partial<FileStoreOptions>) =>
  ({ namespace, clock }: StoreContext) =>
    fileStore({ dir: dirOf(namespace), clock, writeDelayMs: 5, ...overrides })

/** Conformance options of the file store, its race writers in other processes. */
export function fileStoreOptions(name: string, factory: URL, overrides: Partial<FileStoreOptions> = {}): ConformanceOptions {
  return {
    name,
    createStore: ({ namespace, clock }) => fileStore({ dir: dirOf(namespace), clock, ...overrides }),
    dump: async ({ namespace }) => fileStore({ dir: dirOf(namespace) }).dump(),
    // Retried: after a failed case, racer processes may still be finishing a write in the folder.
    cleanup: async ({ namespace }) => rmSync(dirOf(namespace), { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }),
    processes: { module: factory },
    // Declared, as a store written from the READMEs would: nothing of a file store proves a holder dead.
    skip: {
      orphans: 'a file store cannot tell a dead holder from a slow one: its leases end by expiry or release',
      watch: 'a file store cannot notify other processes: a worker finds a wakeup made due at its next poll',
    },
  }
}
