import {
  type CreateTableCommandInput,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb'
import { HarnessError, isHarnessError, isObject, type OptionChecks, optionChecks } from '@tanstack/ai-harness/store'
import { ATTR, SESSION_INDEX, WAKEUP_INDEX } from './keys.js'
import { checkTableName } from './options.js'

/** The default table name of the store. */
export const DEFAULT_TABLE_NAME = 'ai-harness'

/**
 * The table the store needs, as a `CreateTable` request: on-demand billing, key
 * `pk` (S) + `sk` (S), and two global secondary indexes, keys only: `wakeups` keyed by
 * `wk` (S) + `at` (N), and `sessions` keyed by `ls` (S) + `lid` (S) (the session
 * listings; a table made before it has the first index only: add this one with
 * `UpdateTable`). Use it as is, or copy it into your infrastructure code
 * (CloudFormation, CDK, Terraform).
 */
export function harnessTableDefinition(tableName: string = DEFAULT_TABLE_NAME): CreateTableCommandInput {
  checkTableName('harnessTableDefinition', tableName)
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: ATTR.pk, AttributeType: 'S' },
      { AttributeName: ATTR.sk, AttributeType: 'S' },
      { AttributeName: ATTR.wakeupPartition, AttributeType: 'S' },
      { AttributeName: ATTR.wakeupAt, AttributeType: 'N' },
      { AttributeName: ATTR.listPartition, AttributeType: 'S' },
      { AttributeName: ATTR.listId, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: ATTR.pk, KeyType: 'HASH' },
      { AttributeName: ATTR.sk, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: WAKEUP_INDEX,
        KeySchema: [
          { AttributeName: ATTR.wakeupPartition, KeyType: 'HASH' },
          { AttributeName: ATTR.wakeupAt, KeyType: 'RANGE' },
        ],
        // The base keys come along; the session id is the tail of `pk`.
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      {
        IndexName: SESSION_INDEX,
        KeySchema: [
          { AttributeName: ATTR.listPartition, KeyType: 'HASH' },
          { AttributeName: ATTR.listId, KeyType: 'RANGE' },
        ],
        // Only the first batch of each log and each waiting wakeup carry its keys (a sparse index).
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
  }
}

export interface CreateHarnessTableOptions {
  tableName?: string
  /** How long to wait for the table and its index to become ACTIVE. Default 120 000 ms. */
  timeoutMs?: number
  /** Pause between status checks. Default 250 ms. */
  pollMs?: number
}

/**
 * Creates the store's table if it does not exist and waits until it and its index
 * are ACTIVE. Meant for tests and quick starts; in production, create the table with
 * your infrastructure code from {@link harnessTableDefinition}.
 */
export async function createHarnessTable(client: DynamoDBClient, options: CreateHarnessTableOptions = {}): Promise<void> {
  checkTableOptions(client, options)
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME
  try {
    try {
      await client.send(new CreateTableCommand(harnessTableDefinition(tableName)))
    } catch (error) {
      // Another process created it first: fine, wait for it like our own.
      if (!(error instanceof ResourceInUseException)) throw error
    }
    const deadline = Date.now() + (options.timeoutMs ?? 120_000)
    for (;;) {
      if (await isActive(client, tableName)) return
      if (Date.now() > deadline) {
        throw new HarnessError('STORE_UNAVAILABLE', `Table ${tableName} did not become ACTIVE in time; check it in the DynamoDB console.`)
      }
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250))
    }
  } catch (error) {
    if (isHarnessError(error)) throw error
    throw new HarnessError(
      'STORE_UNAVAILABLE',
      `Could not create table ${tableName} (${(error as Error)?.name}: ${(error as Error)?.message}). Check the endpoint, region, credentials and the CreateTable permission.`,
      { cause: error },
    )
  }
}

function checkTableOptions(client: unknown, options: unknown): void {
  const checks: OptionChecks = optionChecks('createHarnessTable')
  if (!(isObject(client) && typeof client.send === 'function')) {
    throw new HarnessError('INVALID_ARGUMENT', 'createHarnessTable takes a DynamoDBClient first, e.g. createHarnessTable(store.client).')
  }
  const given = checks.object(options, '{ tableName: "ai-harness" }')
  checks.knownKeys(given, ['tableName', 'timeoutMs', 'pollMs'])
  checkTableName('createHarnessTable', given.tableName)
  for (const name of ['timeoutMs', 'pollMs']) {
    const value = given[name]
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      checks.invalid(name, 'a number of ms >= 0', value)
    }
  }
}

async function isActive(client: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }))
    return Table?.TableStatus === 'ACTIVE' && (Table.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE')
  } catch (error) {
    // Real DynamoDB can answer "not found" for a moment right after CreateTable.
    if (error instanceof ResourceNotFoundException) return false
    throw error
  }
}
