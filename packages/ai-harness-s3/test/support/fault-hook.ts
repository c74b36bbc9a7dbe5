import type { S3Client } from '@aws-sdk/client-s3'
import type { FaultyStoreContext } from '@tanstack/ai-harness-conformance'

/**
 * Makes `client` fail the writes of an append's batch (a PUT of a key under `/log/`) as
 * `context` says: `'fail'` answers with S3's `SlowDown` (503) without sending the
 * request; `'lose-reply'` sends it, then fails as a reset connection does.
 */
export function failAppendWrites(client: S3Client, context: FaultyStoreContext): void {
  client.middlewareStack.add(
    (next, handler) => async (args) => {
      const key = String((args.input as { Key?: unknown }).Key ?? '')
      const fault = handler.commandName === 'PutObjectCommand' && key.includes('/log/') ? context.onAppendWrite() : undefined
      if (fault === 'fail') {
        const error = Object.assign(new Error('Please reduce your request rate (injected).'), {
          name: 'SlowDown',
          Code: 'SlowDown',
          $metadata: { httpStatusCode: 503 },
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
