/**
 * The stores the flow runs on, from what the test passed in: the memory store, or the
 * DynamoDB store against an endpoint on loopback (dynalite), each run on a namespace of its own.
 */
import { dynamoDbStore } from '@tanstack/ai-harness-dynamodb'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import type { FlowStore } from './checkout-flow.js'

/** What the spawning test tells a run: which store, and where DynamoDB answers. */
export type FlowConfig =
  | { readonly store: 'memory' }
  | { readonly store: 'dynamodb'; readonly endpoint: string; readonly tableName: string; readonly namespace: string }

export function flowStore(config: FlowConfig): FlowStore {
  if (config.store === 'memory') {
    const data = createMemoryData()
    return { open: (clock) => memoryStore({ data, clock }) }
  }
  return {
    open: (clock) =>
      dynamoDbStore({
        tableName: config.tableName,
        namespace: config.namespace,
        clock,
        // dynalite takes any credentials; a real deployment passes its own or the SDK's chain.
        clientConfig: {
          endpoint: config.endpoint,
          region: 'us-east-1',
          credentials: { accessKeyId: 'dynalite', secretAccessKey: 'dynalite' },
        },
      }),
    close: async (store) => (store as ReturnType<typeof dynamoDbStore>).close(),
  }
}
