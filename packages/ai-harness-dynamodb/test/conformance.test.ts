import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { runConformance } from '@tanstack/ai-harness-conformance'
import { afterAll, inject } from 'vitest'
import { dynamoDbStore } from '../src/index.js'
import { failAppendWrites } from './support/fault-hook.js'
import { dynamoNamespaceData } from './support/namespace-data.js'
import { clientConfig } from './target.js'

const target = inject('dynamodb')
const { tableName } = target
// One client for dump and cleanup; every createStore call opens its own, like another process.
const admin = new DynamoDBClient(clientConfig(target))
afterAll(() => admin.destroy())

runConformance({
  name: `dynamodb (${target.emulator === 'dynalite' ? 'dynalite' : target.endpoint})`,
  createStore: ({ namespace, clock, retry, faults }) => {
    const store = dynamoDbStore({ tableName, namespace, clock, clientConfig: clientConfig(target), retry })
    // In the suite's retry cases the store's own client fails the writes of an append on cue.
    if (faults) failAppendWrites(store.client, { namespace, clock, retry: retry ?? {}, ...faults })
    return store
  },
  ...dynamoNamespaceData(admin, tableName),
  faults: true,
  skip: {
    orphans: 'DynamoDB has no signal that a holder died (no connection, no session): leases end by expiry (10 s by default) or release',
    watch: 'DynamoDB cannot notify other processes: a worker finds a wakeup made due at its next poll (1 s by default)',
    fencing:
      'an append is one conditional PutItem on the batch item; the lease is another item, and dynalite has no TransactWriteItems to check both at once',
  },
})
