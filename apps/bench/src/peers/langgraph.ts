import { randomUUID } from 'node:crypto'
import { type Checkpoint, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint'
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres'
import { countedPool } from '../targets/counted-pool.js'
import { dropSchema } from '../targets/drop-schema.js'
import { RequestCounter } from '../targets/requests.js'
import { SMALL_VALUE } from '../workload/values.js'
import type { Peer, PeerStep } from './peer.js'

/**
 * LangGraph's Postgres checkpointer on the same PostgreSQL, in a schema of its own for
 * this run. Each step is one `PostgresSaver.put` of a checkpoint whose new channel
 * holds the small value, chained on the previous checkpoint of the thread, as a
 * graph's loop saves after each super-step.
 */
export async function startLangGraph(runId: string, poolSize: number): Promise<Peer> {
  const requests = new RequestCounter()
  const pool = countedPool(requests, poolSize)
  const schema = `bench_lg_${runId}`
  const saver = new PostgresSaver(pool, undefined, { schema })
  try {
    await saver.setup()
  } catch (error) {
    await pool.end().catch(() => {})
    await dropSchema(schema).catch(() => {})
    throw error
  }
  return {
    async round(steps) {
      const samples: PeerStep[] = []
      let config = { configurable: { thread_id: randomUUID(), checkpoint_ns: '' } }
      for (let i = 0; i < steps; i++) {
        const channel = `step:${i}`
        const checkpoint: Checkpoint = {
          ...emptyCheckpoint(),
          id: uuid6(-1),
          ts: new Date().toISOString(),
          channel_values: { [channel]: SMALL_VALUE },
          channel_versions: { [channel]: 1 },
        }
        const before = requests.snapshot()
        const start = performance.now()
        config = (await saver.put(config, checkpoint, { source: 'loop', step: i, parents: {} }, { [channel]: 1 })) as typeof config
        samples.push({ ms: performance.now() - start, requests: requests.since(before).total })
      }
      return samples
    },
    async close() {
      try {
        await saver.end()
      } finally {
        await dropSchema(schema)
      }
    },
  }
}
