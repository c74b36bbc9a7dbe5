import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { createManualClock } from '@tanstack/ai-harness/testing'
import { type FaultProxy, networkFaultScenarios, startFaultProxy } from '@tanstack/ai-harness/testing/node'
import { afterAll, beforeAll, describe, inject, it } from 'vitest'
import { deleteNamespace, dynamoDbStore } from '../src/index.js'
import { clientConfig } from './target.js'

// The runtime against DynamoDB (dynalite) through a TCP proxy that cuts, resets and
// blackholes connections (the shared network fault scenarios). The SDK has no request
// timeout here: the runtime's deadlines must end every wait.
const target = inject('dynamodb')
const namespace = `netfaults-${Date.now().toString(36)}`
const admin = new DynamoDBClient(clientConfig(target))
let proxy: FaultProxy
const clock = createManualClock()
const stores: Array<{ close(): Promise<void> }> = []

beforeAll(async () => {
  const url = new URL(target.endpoint)
  proxy = await startFaultProxy({ target: { host: url.hostname, port: Number(url.port) } })
})
afterAll(async () => {
  await proxy.close()
  await Promise.all(stores.map((s) => s.close().catch(() => {})))
  await deleteNamespace({ client: admin, tableName: target.tableName, namespace })
  admin.destroy()
})

function storeAt(endpoint: string) {
  const store = dynamoDbStore({
    tableName: target.tableName,
    namespace,
    clock,
    clientConfig: { ...clientConfig(target), endpoint },
    retry: { baseMs: 5, maxMs: 50 },
  })
  stores.push(store)
  return store
}

describe.skipIf(target.emulator !== 'dynalite')('the runtime on DynamoDB through a faulty network', () => {
  for (const scenario of networkFaultScenarios) {
    it(scenario.name, () =>
      scenario.run({
        proxy,
        clock,
        openStore: async () => storeAt(`http://${proxy.address}`),
        openDirectStore: async () => storeAt(target.endpoint),
      }),
    )
  }
})
