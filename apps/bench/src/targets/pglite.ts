import { rm } from 'node:fs/promises'
import { PGlite } from '@electric-sql/pglite'
import type { PGliteLike } from '@tanstack/ai-harness-postgres'
import { countedPGlite } from './counted-pglite.js'
import { freshPGliteDir } from './pglite-template.js'
import { RequestCounter } from './requests.js'
import { sqlTarget } from './sql-target.js'
import type { Target } from './target.js'

/**
 * The store on PGlite. The data lives in a temporary folder, so a recovery child can
 * open the same database after this process closes it (PGlite is one process at a time).
 */
export async function pgliteTarget(runId: string): Promise<Target & { reopen(): Promise<void>; suspend(): Promise<void> }> {
  const requests = new RequestCounter()
  const dataDir = await freshPGliteDir(runId)
  let db = await PGlite.create(dataDir)
  const schema = `bench_${runId}`
  // The store and the baseline go through this one wrapper; `db` is swapped on reopen.
  const client: PGliteLike = {
    query: (text, params) => countedPGlite(db, requests).query(text, params),
    transaction: (callback) => countedPGlite(db, requests).transaction(callback),
    close: () => db.close(),
  }
  const target = await sqlTarget({
    name: 'pglite',
    client,
    run: async (text, values) => (await client.query(text, values)).rows as Array<Record<string, unknown>>,
    requests,
    schema,
    childConnection: () => ({ store: 'pglite', dataDir, schema }),
    async close() {
      if (!db.closed) await db.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  })
  return {
    ...target,
    // A child opens the folder while this process has it closed.
    async suspend() {
      await db.close()
    },
    async reopen() {
      db = await PGlite.create(dataDir)
    },
  }
}
