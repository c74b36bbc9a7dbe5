import { isNetworkError } from '@tanstack/ai-harness/store'

/** Error names DynamoDB uses when it sheds load: always worth another try after a pause. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
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
  const { name, $metadata } = error as AwsErrorShape
  if (name === 'ConditionalCheckFailedException') return false
  if (typeof name === 'string' && (THROTTLING.has(name) || name === 'InternalServerError' || name === 'ServiceUnavailable')) return true
  if (name === 'TimeoutError' || name === 'RequestTimeout' || name === 'AbortError') return true
  if (isNetworkError(error)) return true
  const status = $metadata?.httpStatusCode
  return typeof status === 'number' && status >= 500
}
