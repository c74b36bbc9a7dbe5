import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { runConformance } from '@tanstack/ai-harness-conformance'
import { afterAll, inject } from 'vitest'
import { dynamoDbStore } from '../src/index.js'
import { dynamoNamespaceData } from './support/namespace-data.js'
import { TARGET_ENV } from './racer-store-factory.js'
import { clientConfig } from './target.js'

// The stream and lock cases whose other side runs in other processes: the resume of
// stream.sse.resume and the lock holders of lock.exclusive are child processes, each with its
// own client. (The whole suite runs in conformance.test.ts, in this process.)
const target = inject('dynamodb')
const admin = new DynamoDBClient(clientConfig(target))
afterAll(() => admin.destroy())
// The racer processes (forked with this environment) open their stores on the same target.
process.env[TARGET_ENV] = JSON.stringify(target)

runConformance({
  name: `dynamodb across processes (${target.emulator === 'dynalite' ? 'dynalite' : target.endpoint})`,
  createStore: ({ namespace, clock }) =>
    dynamoDbStore({ tableName: target.tableName, namespace, clock, clientConfig: clientConfig(target) }),
  ...dynamoNamespaceData(admin, target.tableName),
  processes: { module: new URL('./racer-store-factory.ts', import.meta.url) },
  cases: ['stream.sse.resume', 'lock.exclusive'],
})
