import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { type RetryOptions, withRetry } from '@tanstack/ai-harness/store'

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
 * Wraps a client so every call goes through `withRetry` with backoff and jitter.
 * The call builds its command afresh on each try, and gets the attempt number so a
 * write can tell "my own earlier try landed" from "someone else wrote".
 */
export function retryingSender(client: DynamoDBClient, options: DynamoRetryOptions = {}): Send {
  const isTransient = options.isTransient ?? isTransientDynamoError
  // Harness errors (conflicts above all) are never retried: withRetry rethrows them as they are.
  const retry: RetryOptions = { ...options, isTransient }
  return (call) => withRetry((attempt) => call(client, attempt), retry)
}
