import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { HarnessError, type RetryOptions, withRetry } from '@tanstack/ai-harness'

/** Error names DynamoDB uses when it sheds load: always worth another try after a pause. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
])

/** Socket errors: the request may or may not have reached DynamoDB. */
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND', 'ECONNABORTED'])

interface AwsErrorShape {
  name?: unknown
  code?: unknown
  $metadata?: { httpStatusCode?: number }
}

/** True when DynamoDB refused a write because its condition did not hold. */
export function isConditionFailed(error: unknown): boolean {
  return (error as AwsErrorShape | null)?.name === 'ConditionalCheckFailedException'
}

/**
 * True for failures worth retrying: throttling, 5xx, lost connections and timeouts.
 * A failed condition is never transient: it is an answer, not an accident.
 */
export function isTransientDynamoError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { name, code, $metadata } = error as AwsErrorShape
  if (name === 'ConditionalCheckFailedException') return false
  if (typeof name === 'string' && (THROTTLING.has(name) || name === 'InternalServerError' || name === 'ServiceUnavailable')) return true
  if (name === 'TimeoutError' || name === 'RequestTimeout') return true
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true
  const status = $metadata?.httpStatusCode
  return typeof status === 'number' && status >= 500
}

/** How the store retries transient failures; everything but the classifier is optional. */
export type DynamoRetryOptions = Partial<RetryOptions>

/** Something that sends one DynamoDB command, retrying transient failures. */
export type Send = <T>(call: (client: DynamoDBClient, attempt: number) => Promise<T>) => Promise<T>

/**
 * Carries a transient error through `withRetry`. The core's `isHarnessError` takes any
 * Error with a string `code` for a harness error and never retries it, and Node's
 * socket errors (`code: 'ECONNRESET'`) look exactly like that; wrapped, they get retried.
 */
class TransientFailure extends Error {
  constructor(readonly original: unknown) {
    super('transient DynamoDB failure')
  }
}

const unwrap = (error: unknown) => (error instanceof TransientFailure ? error.original : error)

/**
 * Wraps a client so every call goes through `withRetry` with backoff and jitter.
 * The call builds its command afresh on each try, and gets the attempt number so a
 * write can tell "my own earlier try landed" from "someone else wrote".
 */
export function retryingSender(client: DynamoDBClient, options: DynamoRetryOptions = {}): Send {
  const isTransient = options.isTransient ?? isTransientDynamoError
  const retry: RetryOptions = {
    ...options,
    isTransient: (error) => error instanceof TransientFailure,
    onRetry: options.onRetry && ((error, attempt, delayMs) => options.onRetry!(unwrap(error), attempt, delayMs)),
  }
  return async (call) => {
    try {
      return await withRetry(async (attempt) => {
        try {
          return await call(client, attempt)
        } catch (error) {
          throw !(error instanceof HarnessError) && isTransient(error) ? new TransientFailure(error) : error
        }
      }, retry)
    } catch (error) {
      throw unwrap(error)
    }
  }
}
