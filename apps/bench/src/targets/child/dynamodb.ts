import { type AttributeValue, DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { ATTR, dynamoDbStore } from '@tanstack/ai-harness-dynamodb'
import { dynamoClientConfig } from '../aws-config.js'
import { countAwsRequests } from '../aws-count.js'
import type { ChildAccess } from './access.js'
import { RequestCounter } from '../requests.js'
import type { ChildConnection } from '../target.js'

export function dynamoAccess(connection: Extract<ChildConnection, { store: 'dynamodb' }>): ChildAccess {
  const requests = new RequestCounter()
  const client = new DynamoDBClient(dynamoClientConfig(connection.endpoint))
  countAwsRequests(client, requests)
  const { tableName, namespace } = connection
  return {
    requests,
    createStore: () => dynamoDbStore({ client, tableName, namespace }),
    // The session's partition, page by page, each batch item's records parsed.
    async bareRead(logId) {
      const records: LogRecord[] = []
      let startKey: Record<string, AttributeValue> | undefined
      do {
        const out = await client.send(
          new QueryCommand({
            TableName: tableName,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': ATTR.pk },
            // The store's partition key: URL-encoded namespace, `|`, the log id.
            ExpressionAttributeValues: { ':pk': { S: `${encodeURIComponent(namespace)}|${logId}` } },
            ConsistentRead: true,
            ExclusiveStartKey: startKey,
          }),
        )
        for (const item of out.Items ?? []) {
          const text = item[ATTR.records]?.S
          if (text) records.push(...(JSON.parse(text) as LogRecord[]))
        }
        startKey = out.LastEvaluatedKey
      } while (startKey)
      return records
    },
    close: async () => client.destroy(),
  }
}
