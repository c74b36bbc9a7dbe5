/**
 * The stores the flow runs on, from what the test passed in: the memory store, the
 * DynamoDB store against dynalite, or the S3 store against the S3 test server, both on
 * loopback, each run on a namespace (a prefix) of its own.
 */
import type { HarnessStore } from '@tanstack/ai-harness'
import { dynamoDbStore } from '@tanstack/ai-harness-dynamodb'
import { createMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { s3Store } from '@tanstack/ai-harness-s3'
import type { FlowStore } from './checkout-flow.js'

/** What the spawning test tells a run: which store, and where DynamoDB answers. */
export type FlowConfig =
  | { readonly store: 'memory' }
  | { readonly store: 'dynamodb'; readonly endpoint: string; readonly tableName: string; readonly namespace: string }
  | { readonly store: 's3'; readonly endpoint: string; readonly bucket: string; readonly prefix: string }

// The local servers take any credentials; a real deployment passes its own or the SDK's chain.
const LOCAL = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
const closeStore = async (store: HarnessStore) => (store as { close(): Promise<void> }).close()

export function flowStore(config: FlowConfig): FlowStore {
  if (config.store === 'memory') {
    const data = createMemoryData()
    return { open: (clock) => memoryStore({ data, clock }) }
  }
  if (config.store === 's3') {
    const clientConfig = { endpoint: config.endpoint, forcePathStyle: true, ...LOCAL }
    return { open: (clock) => s3Store({ bucket: config.bucket, prefix: config.prefix, clock, clientConfig }), close: closeStore }
  }
  const clientConfig = { endpoint: config.endpoint, ...LOCAL }
  return {
    open: (clock) => dynamoDbStore({ tableName: config.tableName, namespace: config.namespace, clock, clientConfig }),
    close: closeStore,
  }
}
