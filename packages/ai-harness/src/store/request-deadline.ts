/**
 * Runs one try of a store's request with a deadline: past `ms` it rejects with a
 * `TimeoutError` whose `code` is `ETIMEDOUT` (a network error, so the store's retries try
 * again) and aborts the signal `run` got, so the client drops the request.
 * `service` names the database in the message ("S3", "DynamoDB").
 */
export async function withRequestDeadline<T>(service: string, ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = Object.assign(new Error(`${service} did not answer within ${ms} ms (requestTimeoutMs).`), {
        name: 'TimeoutError',
        code: 'ETIMEDOUT',
      })
      reject(error)
      controller.abort(error)
    }, ms)
  })
  try {
    return await Promise.race([run(controller.signal), expired])
  } finally {
    clearTimeout(timer)
  }
}
