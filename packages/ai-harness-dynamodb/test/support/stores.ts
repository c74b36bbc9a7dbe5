import { randomUUID } from 'node:crypto'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { afterAll, afterEach, inject } from 'vitest'
import { type DynamoDbStore, type DynamoDbStoreOptions, dynamoDbStore } from '../../src/index.js'
import { clientConfig } from '../target.js'
import { dynamoNamespaceData } from './namespace-data.js'

/**
 * The stores of one test file: each `open` is another instance (its own client and caches,
 * like another process), closed after each test, its namespace's items deleted.
 */
export function storesOfTest(label: string) {
  const target = inject('dynamodb')
  const { tableName } = target
  const admin = new DynamoDBClient(clientConfig(target))
  const data = dynamoNamespaceData(admin, tableName)
  const stores: DynamoDbStore[] = []
  const namespaces = new Set<string>()
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close()
    for (const namespace of namespaces) await data.cleanup({ namespace })
    namespaces.clear()
  })
  afterAll(() => admin.destroy())
  return {
    target,
    tableName,
    admin,
    /** A fresh namespace, deleted after the test. */
    namespace() {
      const namespace = `${label}-${randomUUID()}`
      namespaces.add(namespace)
      return namespace
    },
    /** Another instance on `options.namespace` (a fresh one when left out). */
    open(options: Partial<DynamoDbStoreOptions> = {}): DynamoDbStore {
      const namespace = options.namespace ?? this.namespace()
      namespaces.add(namespace)
      const store = dynamoDbStore({ tableName, clientConfig: clientConfig(target), ...options, namespace })
      stores.push(store)
      return store
    },
  }
}
