/**
 * The DynamoDB store of the conformance run's racer processes (`processes`): each racer
 * opens its stores here, with a client of its own, on the target conformance-processes.test.ts hands down
 * in `HARNESS_TEST_DYNAMODB_TARGET` (dynalite's port is known only once the tests start).
 */
import type { StoreContext } from '@tanstack/ai-harness-conformance'
import { dynamoDbStore } from '../src/index.js'
import { clientConfig, type DynamoTestTarget } from './target.js'

export const TARGET_ENV = 'HARNESS_TEST_DYNAMODB_TARGET'

export function createStore({ namespace, clock }: StoreContext) {
  const target = JSON.parse(process.env[TARGET_ENV] ?? 'null') as DynamoTestTarget | null
  if (!target) throw new Error(`${TARGET_ENV} is not set: conformance-processes.test.ts sets it before its racers start.`)
  return dynamoDbStore({ tableName: target.tableName, namespace, clock, clientConfig: clientConfig(target) })
}
