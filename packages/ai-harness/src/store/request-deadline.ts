/**
 * `work`, or the error `expired()` makes once `ms` pass: the one deadline every store's
 * request runs under. One promise and one timer per call, cleared as soon as `work`
 * settles (it runs for every statement or request, so no race of two promises).
 */
export function settleWithin<T>(work: Promise<T>, ms: number, expired: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(expired()), ms)
    work.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/**
 * Runs one try of a store's request with a deadline: past `ms` it rejects with a
 * `TimeoutError` whose `code` is `ETIMEDOUT` (a network error, so the store's retries try
 * again) and aborts the signal `run` got, so the client drops the request.
 * `service` names the database in the message ("S3", "DynamoDB").
 */
export function withRequestDeadline<T>(service: string, ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  // A synchronous throw of `run` is a failed try like any other.
  const work = new Promise<T>((resolve) => resolve(run(controller.signal)))
  return settleWithin(work, ms, () => {
    const error = Object.assign(new Error(`${service} did not answer within ${ms} ms (requestTimeoutMs).`), {
      name: 'TimeoutError',
      code: 'ETIMEDOUT',
    })
    controller.abort(error)
    return error
  })
}
