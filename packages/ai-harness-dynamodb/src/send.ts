import type { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import {
  DEFAULT_RETRIES,
  HarnessError,
  isHarnessError,
  type RetryOptions,
  type StoreRetryOptions,
  withRequestDeadline,
  withRetry,
} from '@tanstack/ai-harness/store'
import { isConditionFailed, isTransientDynamoError } from './transient.js'

/** Default deadline of one request (one try), in ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000

/** One try of a call: its number (0 first) and the signal that ends it at its deadline. */
export interface Attempt {
  readonly number: number
  /** Pass it on as `client.send(command, { abortSignal })`, so a try past its deadline frees its socket. */
  readonly abortSignal: AbortSignal
}

/** Something that sends DynamoDB commands, retrying transient failures, each try with a deadline. */
export type Send = <T>(call: (client: DynamoDBClient, attempt: Attempt) => Promise<T>) => Promise<T>

export interface SenderOptions {
  retry?: StoreRetryOptions
  /** Deadline of each try, in ms. Default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  requestTimeoutMs?: number
}

/**
 * Wraps a client so every call has a deadline per try (a half-open connection cannot
 * hang it), goes through `withRetry` with backoff and jitter, and ends in a
 * `HarnessError`: what is left after the retries (or not worth one) becomes
 * `STORE_UNAVAILABLE` with the SDK's error as its `cause`. A failed condition passes
 * through as it is, for the caller to turn into a conflict; so do harness errors.
 * The call builds its command afresh on each try and gets the attempt number, so a
 * write can tell "my own earlier try landed" from "someone else wrote".
 */
export function retryingSender(client: DynamoDBClient, options: SenderOptions = {}): Send {
  const isTransient = options.retry?.isTransient ?? isTransientDynamoError
  const retry: RetryOptions = { ...options.retry, isTransient }
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  return async (call) => {
    try {
      return await withRetry(
        (number) => withRequestDeadline('DynamoDB', timeoutMs, (abortSignal) => call(client, { number, abortSignal })),
        retry,
      )
    } catch (error) {
      if (isHarnessError(error) || isConditionFailed(error)) throw error
      throw unavailable(error, isTransient(error), retry.retries ?? DEFAULT_RETRIES)
    }
  }
}

function unavailable(error: unknown, transient: boolean, retries: number): HarnessError {
  const { name, message } = nameAndMessage(error)
  if (transient) {
    return new HarnessError(
      'STORE_UNAVAILABLE',
      `DynamoDB kept failing after ${retries + 1} tries (${name}: ${message}). Check that it is reachable; ` +
        'after a failed append, read the log back before deciding to write again.',
      { cause: error },
    )
  }
  if (name === 'ResourceNotFoundException') {
    return new HarnessError(
      'STORE_UNAVAILABLE',
      `DynamoDB has no such table or index (${message}). Create it with createHarnessTable() or from harnessTableDefinition().`,
      { cause: error },
    )
  }
  return new HarnessError(
    'STORE_UNAVAILABLE',
    `DynamoDB refused the request (${name}: ${message}). Check the table, region, credentials and IAM permissions of the store's client.`,
    { cause: error },
  )
}

function nameAndMessage(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message }
  return { name: typeof error, message: String(error) }
}
