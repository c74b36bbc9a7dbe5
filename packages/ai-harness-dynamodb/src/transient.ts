import type { RetryOptions } from '@tanstack/ai-harness/store'

/** Error names DynamoDB uses when it sheds load: always worth another try after a pause. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
])

/** Socket errors: the request may or may not have reached DynamoDB. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
])

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
 * True for failures worth retrying: throttling, 5xx, lost connections and timeouts
 * (the store's own deadline included). A failed condition is never transient: it is an
 * answer, not an accident.
 */
export function isTransientDynamoError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const { name, code, $metadata } = error as AwsErrorShape
  if (name === 'ConditionalCheckFailedException') return false
  if (typeof name === 'string' && (THROTTLING.has(name) || name === 'InternalServerError' || name === 'ServiceUnavailable')) return true
  if (name === 'TimeoutError' || name === 'RequestTimeout' || name === 'AbortError') return true
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true
  const status = $metadata?.httpStatusCode
  return typeof status === 'number' && status >= 500
}

/** How the store retries transient failures; everything but the classifier is optional. */
export type DynamoRetryOptions = Partial<RetryOptions>
