import { countedPool } from './counted-pool.js'
import { RequestCounter } from './requests.js'
import { sqlTarget } from './sql-target.js'
import type { Target } from './target.js'

/** The store on the local PostgreSQL through a `pg` Pool, in a schema of its own for this run. */
export async function postgresTarget(runId: string, poolSize: number): Promise<Target> {
  const requests = new RequestCounter()
  const pool = countedPool(requests, poolSize)
  const schema = `bench_${runId}`
  // The store sends every statement with parameters as a named (prepared) statement on
  // pg (its driver.ts), so the baseline does too: otherwise the bare write would pay a
  // parse and plan per call that the store's statement no longer pays.
  const names = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined) {
      name = `bench_${runId}_${names.size}`
      names.set(text, name)
    }
    return name
  }
  return sqlTarget({
    name: 'postgres',
    client: pool,
    run: async (text, values) => (await (values === undefined ? pool.query(text) : pool.query({ name: nameOf(text), text, values }))).rows,
    requests,
    schema,
    childConnection: () => ({ store: 'postgres', schema }),
    close: () => pool.end(),
  })
}
