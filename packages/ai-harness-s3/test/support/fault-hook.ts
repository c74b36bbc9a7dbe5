import type { S3Client } from '@aws-sdk/client-s3'
import { appendWriteFault, type FaultyStoreContext, sendWithFault } from '@tanstack/ai-harness-conformance'

/** S3's own retryable answer to too many requests. */
const slowDown = () =>
  Object.assign(new Error('Please reduce your request rate (injected).'), {
    name: 'SlowDown',
    Code: 'SlowDown',
    $metadata: { httpStatusCode: 503 },
  })

/**
 * Makes `client` fail the writes of an append's batch (a PUT of a key under `/log/`) as
 * `context` says (see `appendWriteFault`): `'fail'` with S3's `SlowDown` (503).
 */
export function failAppendWrites(client: S3Client, context: FaultyStoreContext): void {
  client.middlewareStack.add(
    (next, handler) => async (args) => {
      const key = String((args.input as { Key?: unknown }).Key ?? '')
      const write = handler.commandName === 'PutObjectCommand' && key.includes('/log/')
      return sendWithFault(write ? appendWriteFault(context, slowDown) : undefined, () => next(args))
    },
    { step: 'initialize' },
  )
}
