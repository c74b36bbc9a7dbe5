import { checkRetryOptions, HarnessError, isWellFormedText, type StoreLimits, utf8Length } from '@tanstack/ai-harness/store'
import { keyLayout } from './keys.js'
import { DYNAMODB_DEFAULT_LIMITS, DYNAMODB_MAX_ITEM_BYTES, itemOverheadBytes } from './limits.js'

const invalid = (option: string, accepts: string, got: unknown) =>
  new HarnessError('INVALID_ARGUMENT', `dynamoDbStore: option ${option} must be ${accepts}; got ${shown(got)}.`)

function shown(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return `an object (${Object.keys(value).slice(0, 5).join(', ') || 'no keys'})`
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  return `${typeof value} ${String(value)}`
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

const isPositiveInteger = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0

/** Refuses keys the store does not know: a typo would otherwise fall back to a default in silence. */
export function assertKnownKeys(where: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      throw new HarnessError('INVALID_ARGUMENT', `${where}: unknown option ${JSON.stringify(key)}; the options are ${known.join(', ')}.`)
    }
  }
}

const STORE_OPTIONS = ['tableName', 'namespace', 'client', 'clientConfig', 'clock', 'limits', 'retry', 'requestTimeoutMs'] as const
const LIMIT_KEYS = ['maxRecordBytes', 'maxBatchBytes', 'maxBatchRecords', 'maxLogIdBytes'] as const
/** DynamoDB's rule for table names. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/
/** The shortest room for log ids a namespace may leave: a UUID's. */
const MIN_ID_ROOM = 36
/** setTimeout's largest delay. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1

/** Checks the store's options, answering INVALID_ARGUMENT that names the option and what it accepts. */
export function checkStoreOptions(options: unknown): void {
  if (options === undefined) return
  if (!isObject(options))
    throw new HarnessError('INVALID_ARGUMENT', `dynamoDbStore takes an options object or nothing; got ${shown(options)}.`)
  assertKnownKeys('dynamoDbStore', options, STORE_OPTIONS)
  const { tableName, namespace, client, clientConfig, clock, retry, requestTimeoutMs } = options
  checkTableName('dynamoDbStore', tableName)
  if (namespace !== undefined) {
    if (typeof namespace !== 'string' || !isWellFormedText(namespace))
      invalidThrow('namespace', 'a string of well-formed Unicode', namespace)
    const room = keyLayout(namespace).maxLogIdBytes
    if (room < MIN_ID_ROOM) {
      throw invalid(
        'namespace',
        `short enough to leave ${MIN_ID_ROOM} bytes for log ids in a 2048-byte partition key (this one is ${utf8Length(namespace)} bytes and leaves ${room})`,
        namespace,
      )
    }
  }
  if (client !== undefined && !(isObject(client) && typeof client.send === 'function')) {
    invalidThrow('client', 'a DynamoDBClient from @aws-sdk/client-dynamodb', client)
  }
  if (clientConfig !== undefined && !isObject(clientConfig)) invalidThrow('clientConfig', 'a DynamoDBClientConfig object', clientConfig)
  if (client !== undefined && clientConfig !== undefined) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      'dynamoDbStore: pass client (yours) or clientConfig (for a client the store creates), not both.',
    )
  }
  if (clock !== undefined && !(isObject(clock) && typeof clock.now === 'function'))
    invalidThrow('clock', 'an object with now(): number', clock)
  checkRetryOptions('dynamoDbStore', retry)
  if (
    requestTimeoutMs !== undefined &&
    !(typeof requestTimeoutMs === 'number' && requestTimeoutMs > 0 && requestTimeoutMs <= MAX_TIMEOUT_MS)
  ) {
    invalidThrow('requestTimeoutMs', `a number of ms above 0 and at most ${MAX_TIMEOUT_MS}`, requestTimeoutMs)
  }
}

function invalidThrow(option: string, accepts: string, got: unknown): never {
  throw invalid(option, accepts, got)
}

export function checkTableName(where: string, tableName: unknown): void {
  if (tableName !== undefined && !(typeof tableName === 'string' && TABLE_NAME.test(tableName))) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `${where}: option tableName must be a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -); got ${shown(tableName)}.`,
    )
  }
}

/**
 * The store's limits: the defaults, lowered by `given`. Larger ones are refused, since a
 * batch must fit in one 400 KB item; `maxLogIdBytes` is what the partition key leaves
 * after the namespace.
 */
export function storeLimits(given: unknown, maxLogIdBytes: number): StoreLimits {
  if (given !== undefined && !isObject(given)) invalidThrow('limits', 'an object like { maxBatchBytes: 100000 }', given)
  const partial = (given ?? {}) as Record<string, unknown>
  assertKnownKeys('dynamoDbStore limits', partial, LIMIT_KEYS)
  for (const key of LIMIT_KEYS) {
    if (partial[key] !== undefined && !isPositiveInteger(partial[key])) invalidThrow(`limits.${key}`, 'a positive integer', partial[key])
  }
  const limits: StoreLimits = { ...DYNAMODB_DEFAULT_LIMITS, maxLogIdBytes, ...(partial as Partial<StoreLimits>) }
  if (limits.maxBatchBytes + itemOverheadBytes(limits) > DYNAMODB_MAX_ITEM_BYTES) {
    throw new HarnessError(
      'INVALID_ARGUMENT',
      `dynamoDbStore: limits do not fit in a DynamoDB item: keep maxBatchBytes at most ${DYNAMODB_DEFAULT_LIMITS.maxBatchBytes} and maxBatchRecords at most ${DYNAMODB_DEFAULT_LIMITS.maxBatchRecords}.`,
    )
  }
  if (limits.maxLogIdBytes! > maxLogIdBytes) {
    invalidThrow(
      'limits.maxLogIdBytes',
      `at most ${maxLogIdBytes} (what a partition key leaves after this namespace)`,
      limits.maxLogIdBytes,
    )
  }
  return limits
}
