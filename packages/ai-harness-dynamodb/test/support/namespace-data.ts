import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { NamespaceData } from '@tanstack/ai-harness-conformance'
import { deleteNamespace, dumpNamespace } from '../../src/index.js'

/** A namespace is the store's `namespace` option: its dump is a Scan of its items, its cleanup deletes them. */
export function dynamoNamespaceData(client: DynamoDBClient, tableName: string): NamespaceData {
  return {
    dump: ({ namespace }) => dumpNamespace({ client, tableName, namespace }),
    cleanup: ({ namespace }) => deleteNamespace({ client, tableName, namespace }),
  }
}
