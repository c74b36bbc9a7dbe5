import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb'
import { deleteKeys } from './batches.js'
import { ATTR, keyLayout } from './keys.js'
import { retryingSender } from './send.js'
import { DEFAULT_TABLE_NAME } from './table.js'
import type { StoreRetryOptions } from '@tanstack/ai-harness/store'

export interface NamespaceOptions {
  client: DynamoDBClient
  tableName?: string
  namespace: string
  retry?: StoreRetryOptions
}

/**
 * Every item of a namespace, by a strongly consistent Scan filtered on the key prefix.
 * It reads the whole table: for tests, audits and exports, never for the hot path.
 */
export async function scanNamespace(options: NamespaceOptions): Promise<Record<string, AttributeValue>[]> {
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME
  const send = retryingSender(options.client, { retry: options.retry })
  const { prefix } = keyLayout(options.namespace)
  const items: Record<string, AttributeValue>[] = []
  let startKey: Record<string, AttributeValue> | undefined
  do {
    const out = await send((client, { abortSignal }) =>
      client.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: 'begins_with(#pk, :prefix)',
          ExpressionAttributeNames: { '#pk': ATTR.pk },
          ExpressionAttributeValues: { ':prefix': { S: prefix } },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
        { abortSignal },
      ),
    )
    items.push(...(out.Items ?? []))
    startKey = out.LastEvaluatedKey
  } while (startKey)
  return items
}

/** The raw items of a namespace as JSON text: what the conformance suite's `dump()` searches. */
export async function dumpNamespace(options: NamespaceOptions): Promise<string> {
  return JSON.stringify(await scanNamespace(options))
}

/** Deletes every item of a namespace (Scan, then BatchWriteItem). For tests and teardown. */
export async function deleteNamespace(options: NamespaceOptions): Promise<void> {
  const items = await scanNamespace(options)
  const keys = items.map((item) => ({ [ATTR.pk]: item[ATTR.pk]!, [ATTR.sk]: item[ATTR.sk]! }))
  await deleteKeys(
    { tableName: options.tableName ?? DEFAULT_TABLE_NAME, send: retryingSender(options.client, { retry: options.retry }) },
    keys,
  )
}
