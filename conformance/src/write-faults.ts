import type { FaultyStoreContext } from './options.js'

/** A fault to apply to one request: its error, thrown before the request is sent or after it ran. */
export interface RequestFault {
  readonly error: unknown
  readonly when: 'before' | 'after'
}

/**
 * What a faulty store's client does to one write of an append's batch (see `ConformanceOptions.faults`):
 * it asks `context.onAppendWrite()`, and for `'fail'` gives `transientError()` (your
 * database's own retryable error) before the request is sent; for `'lose-reply'` a reset
 * connection (`ECONNRESET`) after it ran; else nothing. Each error it makes is reported
 * to `context.injected`. Apply the result with {@link sendWithFault}.
 */
export function appendWriteFault(context: FaultyStoreContext, transientError: () => Error): RequestFault | undefined {
  const fault = context.onAppendWrite()
  if (fault === undefined) return undefined
  const error =
    fault === 'fail'
      ? transientError()
      : Object.assign(new Error('read ECONNRESET (injected: the write landed, its reply was lost)'), { code: 'ECONNRESET' })
  context.injected(error)
  return { error, when: fault === 'fail' ? 'before' : 'after' }
}

/** Sends a request with `fault` applied: nothing sent and its error, or sent and then its error, or just sent. */
export async function sendWithFault<T>(fault: RequestFault | undefined, send: () => Promise<T>): Promise<T> {
  if (fault?.when === 'before') throw fault.error
  const result = await send()
  if (fault?.when === 'after') throw fault.error
  return result
}
