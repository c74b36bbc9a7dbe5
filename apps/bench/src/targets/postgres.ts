import { countedPool } from './counted-pool.js'
import { RequestCounter } from './requests.js'
import { sqlTarget } from './sql-target.js'
import type { Target } from './target.js'

/** The store on the local PostgreSQL through a `pg` Pool, in a schema of its own for this run. */
export async function postgresTarget(runId: string, poolSize: number): Promise<Target> {
  const requests = new RequestCounter()
  const pool = countedPool(requests, poolSize)
  const schema = `bench_${runId}`
  return sqlTarget({
    name: 'postgres',
    client: pool,
    run: async (text, values) => (await pool.query(text, values)).rows,
    requests,
    schema,
    childConnection: () => ({ store: 'postgres', schema }),
    close: () => pool.end(),
  })
}
