import {
  checkRetryOptions,
  isWellFormedText,
  type OptionChecks,
  optionChecks,
  type StoreLimits,
  utf8Length,
} from '@tanstack/ai-harness/store'
import { keyLayout } from './keys.js'
import { DYNAMODB_DEFAULT_LIMITS, DYNAMODB_MAX_ITEM_BYTES, itemOverheadBytes } from './limits.js'

const STORE_OPTIONS = ['tableName', 'namespace', 'client', 'clientConfig', 'clock', 'limits', 'retry', 'requestTimeoutMs'] as const
/** DynamoDB's rule for table names. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/
/** The shortest room for log ids a namespace may leave: a UUID's. */
const MIN_ID_ROOM = 36

const checks: OptionChecks = optionChecks('dynamoDbStore')

/** Checks the store's options, answering INVALID_ARGUMENT that names the option and what it accepts. */
export function checkStoreOptions(options: unknown): void {
  const given = checks.object(options, "{ tableName: 'ai-harness' }", true)
  checks.knownKeys(given, STORE_OPTIONS)
  const { tableName, namespace, client, clientConfig, clock, retry, requestTimeoutMs } = given
  checkTableName('dynamoDbStore', tableName)
  if (namespace !== undefined) {
    if (typeof namespace !== 'string' || !isWellFormedText(namespace))
      checks.invalid('namespace', 'a string of well-formed Unicode', namespace)
    const room = keyLayout(namespace).maxLogIdBytes
    if (room < MIN_ID_ROOM) {
      checks.invalid(
        'namespace',
        `short enough to leave ${MIN_ID_ROOM} bytes for log ids in a 2048-byte partition key (this one is ${utf8Length(namespace)} bytes and leaves ${room})`,
        namespace,
      )
    }
  }
  checks.clientOrConfig(client, clientConfig, {
    client: 'a DynamoDBClient from @aws-sdk/client-dynamodb',
    clientConfig: 'a DynamoDBClientConfig object',
  })
  checks.clock(clock)
  checkRetryOptions('dynamoDbStore', retry)
  checks.timeoutMs('requestTimeoutMs', requestTimeoutMs)
}

/** Refuses a name DynamoDB would refuse; `where` names the function that took it. */
export function checkTableName(where: string, tableName: unknown): void {
  if (tableName !== undefined && !(typeof tableName === 'string' && TABLE_NAME.test(tableName))) {
    optionChecks(where).invalid('tableName', 'a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -)', tableName)
  }
}

/**
 * The store's limits: the defaults, lowered by `given`. Larger ones are refused, since a
 * batch must fit in one 400 KB item; `maxLogIdBytes` is what the partition key leaves
 * after the namespace.
 */
export function storeLimits(given: unknown, maxLogIdBytes: number): StoreLimits {
  const limits: StoreLimits = { ...DYNAMODB_DEFAULT_LIMITS, maxLogIdBytes, ...checks.limits(given) }
  if (limits.maxBatchBytes + itemOverheadBytes(limits) > DYNAMODB_MAX_ITEM_BYTES) {
    checks.refuse(
      `limits do not fit in a DynamoDB item: keep maxBatchBytes at most ${DYNAMODB_DEFAULT_LIMITS.maxBatchBytes} and maxBatchRecords at most ${DYNAMODB_DEFAULT_LIMITS.maxBatchRecords}.`,
    )
  }
  if (limits.maxLogIdBytes! > maxLogIdBytes) {
    checks.invalid(
      'limits.maxLogIdBytes',
      `at most ${maxLogIdBytes} (what a partition key leaves after this namespace)`,
      limits.maxLogIdBytes,
    )
  }
  return limits
}
