import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import type { FaultyStoreContext } from '@tanstack/ai-harness-conformance'
import { ATTR } from '../../src/index.js'

/**
 * Makes `client` fail the writes of an append's batch (a PutItem of an item with records)
 * as `context` says: `'fail'` answers with DynamoDB's throttling error without sending the
 * request; `'lose-reply'` sends it, then fails as a reset connection does.
 */
export function failAppendWrites(client: DynamoDBClient, context: FaultyStoreContext): void {
  client.middlewareStack.add(
    (next, handler) => async (args) => {
      const item = (args.input as { Item?: Record<string, unknown> }).Item
      const fault = handler.commandName === 'PutItemCommand' && item?.[ATTR.records] !== undefined ? context.onAppendWrite() : undefined
      if (fault === 'fail') {
        const error = Object.assign(new Error('Rate of requests exceeds the allowed throughput (injected).'), {
          name: 'ThrottlingException',
          $metadata: { httpStatusCode: 400 },
        })
        context.injected(error)
        throw error
      }
      const result = await next(args)
      if (fault === 'lose-reply') {
        const error = Object.assign(new Error('socket hang up (injected, after the write landed)'), { code: 'ECONNRESET' })
        context.injected(error)
        throw error
      }
      return result
    },
    { step: 'initialize' },
  )
}
