import { DBOS } from '@dbos-inc/dbos-sdk'
import { countedPool } from '../targets/counted-pool.js'
import { dropSchema } from '../targets/drop-schema.js'
import { pgUrl } from '../targets/pg-config.js'
import { RequestCounter } from '../targets/requests.js'
import { SMALL_VALUE } from '../workload/values.js'
import type { Peer, PeerStep } from './peer.js'

/**
 * DBOS Transact on the same PostgreSQL, with its system tables in a schema of its own
 * for this run. A workflow runs `steps` steps (`DBOS.runStep`) returning the small
 * value, each timed from inside the workflow, as ours is timed inside the tool.
 */
export async function startDbos(runId: string, poolSize: number): Promise<Peer> {
  const requests = new RequestCounter()
  const pool = countedPool(requests, poolSize)
  const schema = `bench_dbos_${runId}`
  let samples: PeerStep[] = []
  DBOS.setConfig({
    name: `bench_${runId}`,
    systemDatabaseUrl: pgUrl(),
    systemDatabasePool: pool,
    systemDatabaseSchemaName: schema,
    logLevel: 'error',
  })
  const workflow = DBOS.registerWorkflow(
    async (steps: number) => {
      for (let i = 0; i < steps; i++) {
        const before = requests.snapshot()
        const start = performance.now()
        await DBOS.runStep(async () => SMALL_VALUE, { name: `step:${i}` })
        samples.push({ ms: performance.now() - start, requests: requests.since(before).total })
      }
    },
    { name: 'benchSteps' },
  )
  try {
    await DBOS.launch()
  } catch (error) {
    await pool.end().catch(() => {})
    await dropSchema(schema).catch(() => {})
    throw error
  }
  return {
    async round(steps) {
      samples = []
      await workflow(steps)
      return samples
    },
    async close() {
      try {
        await DBOS.shutdown({ deregister: true })
      } finally {
        await pool.end().catch(() => {})
        await dropSchema(schema)
      }
    },
  }
}
