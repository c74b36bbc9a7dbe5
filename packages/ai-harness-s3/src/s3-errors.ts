/** How the store reads an error from `@aws-sdk/client-s3`. */
import { isNetworkError } from '@tanstack/ai-harness/store'

interface SdkErrorShape {
  name?: string
  code?: string
  Code?: string
  $metadata?: { httpStatusCode?: number }
}

const statusOf = (error: unknown) => (error as SdkErrorShape | undefined)?.$metadata?.httpStatusCode
const nameOf = (error: unknown) => {
  const e = error as SdkErrorShape | undefined
  return e?.Code ?? e?.name
}

const TRANSIENT_CODES = new Set([
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'RequestTimeoutException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TimeoutError',
  'AbortError',
  // 409 on S3's side, but "a conflicting operation is in progress, try again".
  'OperationAborted',
])
/**
 * Worth another try: throttling (`SlowDown`, 503), 5xx, timeouts, lost connections.
 * Never a precondition failure: a 412/409 says the state moved, and only a fresh read
 * can decide what to do next.
 */
export function isTransientS3Error(error: unknown): boolean {
  if (isPreconditionFailure(error)) return false
  const status = statusOf(error)
  if (status !== undefined && (status >= 500 || status === 429 || status === 408)) return true
  const name = nameOf(error)
  if (name !== undefined && TRANSIENT_CODES.has(name)) return true
  return isNetworkError(error)
}

/**
 * A conditional write lost: `412 PreconditionFailed`, or `409 ConditionalRequestConflict`
 * (another write of the key was in flight; AWS says retry, and the store's retry is to
 * read again, which is what the caller of a conflict does).
 */
export function isPreconditionFailure(error: unknown): boolean {
  const status = statusOf(error)
  const name = nameOf(error)
  return status === 412 || name === 'PreconditionFailed' || name === 'ConditionalRequestConflict'
}

/** The key is missing (a 404 about the key; a missing bucket is a configuration error instead). */
export function isNotFound(error: unknown): boolean {
  const name = nameOf(error)
  if (name === 'NoSuchBucket') return false
  return statusOf(error) === 404 || name === 'NoSuchKey' || name === 'NotFound'
}
