import { Readable } from 'node:stream'
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb'

/** What the faulty transport does to one request of an operation. */
export type Fault =
  /** Answer as DynamoDB does when it sheds load, without sending the request. */
  (
    | { op: string; error: 'ProvisionedThroughputExceededException' | 'ThrottlingException' | 'RequestLimitExceeded' }
    /** Answer with a server error, without sending the request. */
    | { op: string; status: 500 | 503 }
    /** Send the request (it lands), then lose the response as a reset connection would. */
    | { op: string; lostResponse: true }
  ) & {
    /** Let this many matching requests through first. Default 0. */
    skip?: number
  }

interface HttpRequestLike {
  headers: Record<string, string>
}

type Handler = {
  handle(request: HttpRequestLike, options?: unknown): Promise<{ response: unknown }>
  destroy?(): void
  updateHttpClientConfig?(key: never, value: never): void
  httpHandlerConfigs?(): unknown
}

/**
 * A DynamoDB client whose transport injects faults into the real HTTP exchange with
 * the test server: the SDK parses the fake answers exactly as it parses DynamoDB's, so
 * the store sees the same errors it would see in production.
 */
export function faultyClient(config: DynamoDBClientConfig, faults: Fault[]) {
  const base = new DynamoDBClient(config)
  const real = base.config.requestHandler as unknown as Handler
  const calls: string[] = []
  const pending = [...faults]
  const handler: Handler = {
    async handle(request, options) {
      const op = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? ''
      calls.push(op)
      const index = pending.findIndex((f) => f.op === op)
      const match = pending[index]
      if (match?.skip) pending[index] = { ...match, skip: match.skip - 1 }
      const fault = match && !match.skip ? pending.splice(index, 1)[0] : undefined
      if (!fault) return real.handle(request, options)
      if ('lostResponse' in fault) {
        await real.handle(request, options)
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })
      }
      if ('status' in fault) {
        const name = fault.status === 500 ? 'InternalServerError' : 'ServiceUnavailable'
        return { response: awsError(fault.status, name) }
      }
      return { response: awsError(400, fault.error) }
    },
    destroy: () => real.destroy?.(),
    updateHttpClientConfig: (key, value) => real.updateHttpClientConfig?.(key, value),
    httpHandlerConfigs: () => real.httpHandlerConfigs?.() ?? {},
  }
  const client = new DynamoDBClient({ ...config, requestHandler: handler as DynamoDBClientConfig['requestHandler'] })
  return {
    client,
    /** Operations sent, in order, including the faulted ones. */
    calls,
    count: (op: string) => calls.filter((c) => c === op).length,
    /** Faults not used yet. */
    pending,
    destroy() {
      client.destroy()
      base.destroy()
    },
  }
}

/** An error response in DynamoDB's JSON protocol. */
function awsError(statusCode: number, name: string) {
  const body = JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${name}`, message: `injected ${name}` })
  return {
    statusCode,
    reason: name,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': name, 'content-length': String(Buffer.byteLength(body)) },
    body: Readable.from([Buffer.from(body)]),
  }
}
