import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { appendWriteFault, type FaultyStoreContext, sendWithFault } from '@tanstack/ai-harness-conformance'
import { ATTR } from '../../src/index.js'

/** DynamoDB's own retryable answer to too many requests. */
const throttled = () =>
  Object.assign(new Error('Rate of requests exceeds the allowed throughput (injected).'), {
    name: 'ThrottlingException',
    $metadata: { httpStatusCode: 400 },
  })

/**
 * Makes `client` fail the writes of an append's batch (a PutItem of an item with records)
 * as `context` says (see `appendWriteFault`): `'fail'` with DynamoDB's throttling error.
 */
export function failAppendWrites(client: DynamoDBClient, context: FaultyStoreContext): void {
  client.middlewareStack.add(
    (next, handler) => async (args) => {
      const item = (args.input as { Item?: Record<string, unknown> }).Item
      const write = handler.commandName === 'PutItemCommand' && item?.[ATTR.records] !== undefined
      return sendWithFault(write ? appendWriteFault(context, throttled) : undefined, () => next(args))
    },
    { step: 'initialize' },
  )
}
