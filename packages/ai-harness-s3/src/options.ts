import { checkRetryOptions, HarnessError, isWellFormedText, type StoreLimits } from '@tanstack/ai-harness/store'

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function shown(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return `an object (${Object.keys(value).slice(0, 5).join(', ') || 'no keys'})`
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  return `${typeof value} ${String(value)}`
}

function invalid(option: string, accepts: string, got: unknown): never {
  throw new HarnessError('INVALID_ARGUMENT', `s3Store: option ${option} must be ${accepts}; got ${shown(got)}.`)
}

/** Refuses keys the store does not know: a typo would otherwise fall back to a default in silence. */
function assertKnownKeys(where: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new HarnessError('INVALID_ARGUMENT', `${where}: unknown option ${JSON.stringify(key)}; the options are ${known.join(', ')}.`)
    }
  }
}

const STORE_OPTIONS = [
  'bucket',
  'prefix',
  'client',
  'clientConfig',
  'clock',
  'limits',
  'readConcurrency',
  'retry',
  'requestTimeoutMs',
] as const
const LIMIT_KEYS = ['maxRecordBytes', 'maxBatchBytes', 'maxBatchRecords', 'maxLogIdBytes'] as const
/** The shortest room for log ids a prefix may leave: a UUID's. */
const MIN_ID_ROOM = 36
/** setTimeout's largest delay. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1

/** Checks the store's options, answering INVALID_ARGUMENT that names the option and what it accepts. */
export function checkStoreOptions(options: unknown): asserts options is Record<string, unknown> {
  if (!isObject(options)) {
    throw new HarnessError('INVALID_ARGUMENT', `s3Store takes an options object like { bucket: 'my-app' }; got ${shown(options)}.`)
  }
  assertKnownKeys('s3Store', options, STORE_OPTIONS)
  const { bucket, prefix, client, clientConfig, clock, retry, readConcurrency, requestTimeoutMs } = options
  if (typeof bucket !== 'string' || bucket === '') invalid('bucket', 'the name of an existing bucket (a non-empty string)', bucket)
  if (prefix !== undefined && !(typeof prefix === 'string' && isWellFormedText(prefix)))
    invalid('prefix', 'a string of well-formed Unicode', prefix)
  if (client !== undefined && !(isObject(client) && typeof client.send === 'function'))
    invalid('client', 'an S3Client from @aws-sdk/client-s3', client)
  if (clientConfig !== undefined && !isObject(clientConfig)) invalid('clientConfig', 'an S3ClientConfig object', clientConfig)
  if (client !== undefined && clientConfig !== undefined) {
    throw new HarnessError('INVALID_ARGUMENT', 's3Store: pass client (yours) or clientConfig (for a client the store creates), not both.')
  }
  if (clock !== undefined && !(isObject(clock) && typeof clock.now === 'function')) invalid('clock', 'an object with now(): number', clock)
  if (readConcurrency !== undefined && !(Number.isSafeInteger(readConcurrency) && (readConcurrency as number) > 0)) {
    invalid('readConcurrency', 'a positive integer', readConcurrency)
  }
  checkRetryOptions('s3Store', retry)
  if (
    requestTimeoutMs !== undefined &&
    !(typeof requestTimeoutMs === 'number' && requestTimeoutMs > 0 && requestTimeoutMs <= MAX_TIMEOUT_MS)
  ) {
    invalid('requestTimeoutMs', `a number of ms above 0 and at most ${MAX_TIMEOUT_MS}`, requestTimeoutMs)
  }
}

/** The store's limits: the defaults, changed by `given`; `maxLogIdBytes` at most what the keys leave after the prefix. */
export function storeLimits(defaults: StoreLimits, given: unknown, maxLogIdBytes: number): StoreLimits {
  if (maxLogIdBytes < MIN_ID_ROOM) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `s3Store: option prefix is too long: S3's 1024-byte keys leave log ids only ${maxLogIdBytes} bytes after it; keep at least ${MIN_ID_ROOM} (a UUID).`,
    )
  }
  if (given !== undefined && !isObject(given)) invalid('limits', 'an object like { maxBatchBytes: 100000 }', given)
  const partial = (given ?? {}) as Record<string, unknown>
  assertKnownKeys('s3Store limits', partial, LIMIT_KEYS)
  for (const key of LIMIT_KEYS) {
    const value = partial[key]
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) > 0))
      invalid(`limits.${key}`, 'a positive integer', value)
  }
  const limits: StoreLimits = { ...defaults, maxLogIdBytes, ...(partial as Partial<StoreLimits>) }
  if (limits.maxLogIdBytes! > maxLogIdBytes) {
    invalid('limits.maxLogIdBytes', `at most ${maxLogIdBytes} (what S3's 1024-byte keys leave after this prefix)`, limits.maxLogIdBytes)
  }
  return limits
}
