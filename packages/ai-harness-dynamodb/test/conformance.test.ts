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
  createStore: ({ namespace, clock }) => dynamoDbStore({ tableName, namespace, clock, clientConfig: clientConfig(target) }),
  ...dynamoNamespaceData(admin, tableName),
  faults: {
    createStore: (context) => {
      const { namespace, clock, retry } = context
      const store = dynamoDbStore({ tableName, namespace, clock, clientConfig: clientConfig(target), retry })
      failAppendWrites(store.client, context)
      return store
    },
  },
  skip: {
    orphans: 'DynamoDB has no signal that a holder died (no connection, no session): leases end by expiry (10 s by default) or release',
    fencing:
      'an append is one conditional PutItem on the batch item; the lease is another item, and dynalite has no TransactWriteItems to check both at once',
  },
})
