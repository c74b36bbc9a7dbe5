import type { AddressInfo } from 'node:net'
import { DeleteTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb'
import { ATTR, createHarnessTable, dynamoDbStore } from '@tanstack/ai-harness-dynamodb'
import dynalite from 'dynalite'
import { dynamoClientConfig } from './aws-config.js'
import { countAwsRequests } from './aws-count.js'
import { RequestCounter } from './requests.js'
import type { Target } from './target.js'

/**
 * The store on dynalite, started in this process on a random loopback port (as the
 * package's tests do), with a table of its own for this run. The baseline is a PutItem
 * of the same item shape (pk, sk, count, records text) with `attribute_not_exists`.
 */
export async function dynamoTarget(runId: string): Promise<Target> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const requests = new RequestCounter()
  const client = new DynamoDBClient(dynamoClientConfig(endpoint))
  countAwsRequests(client, requests)
  const tableName = `bench-${runId}`
  const namespace = `bench-${runId}`
  await createHarnessTable(client, { tableName, pollMs: 20 })
  return {
    name: 'dynamodb',
    requests,
    createStore: () => dynamoDbStore({ client, tableName, namespace }),
    async bareWrite(key, bytes) {
      await client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            [ATTR.pk]: { S: `bare|${key}` },
            [ATTR.sk]: { S: 'b#0000000000000001' },
            [ATTR.count]: { N: '1' },
            [ATTR.records]: { S: `[${bytes}]` },
          },
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': ATTR.pk },
        }),
      )
    },
    childConnection: () => ({ store: 'dynamodb', endpoint, tableName, namespace }),
    async close() {
      try {
        await client.send(new DeleteTableCommand({ TableName: tableName }))
      } finally {
        client.destroy()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    },
  }
}
