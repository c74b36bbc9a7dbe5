import { checkRetryOptions, isWellFormedText, type OptionChecks, optionChecks, type StoreLimits } from '@tanstack/ai-harness/store'

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
/** The shortest room for log ids a prefix may leave: a UUID's. */
const MIN_ID_ROOM = 36

const checks: OptionChecks = optionChecks('s3Store')

/** Checks the store's options, answering INVALID_ARGUMENT that names the option and what it accepts. */
export function checkStoreOptions(options: unknown): asserts options is Record<string, unknown> {
  const given = checks.object(options, "{ bucket: 'my-app' }")
  checks.knownKeys(given, STORE_OPTIONS)
  const { bucket, prefix, client, clientConfig, clock, retry, readConcurrency, requestTimeoutMs } = given
  if (typeof bucket !== 'string' || bucket === '') checks.invalid('bucket', 'the name of an existing bucket (a non-empty string)', bucket)
  if (prefix !== undefined && !(typeof prefix === 'string' && isWellFormedText(prefix))) {
    checks.invalid('prefix', 'a string of well-formed Unicode', prefix)
  }
  checks.clientOrConfig(client, clientConfig, { client: 'an S3Client from @aws-sdk/client-s3', clientConfig: 'an S3ClientConfig object' })
  checks.clock(clock)
  checks.positiveInteger('readConcurrency', readConcurrency)
  checkRetryOptions('s3Store', retry)
  checks.timeoutMs('requestTimeoutMs', requestTimeoutMs)
}

/** The store's limits: the defaults, changed by `given`; `maxLogIdBytes` at most what the keys leave after the prefix. */
export function storeLimits(defaults: StoreLimits, given: unknown, maxLogIdBytes: number): StoreLimits {
  if (maxLogIdBytes < MIN_ID_ROOM) {
    checks.refuse(
      `option prefix is too long: S3's 1024-byte keys leave log ids only ${maxLogIdBytes} bytes after it; keep at least ${MIN_ID_ROOM} (a UUID).`,
    )
  }
  const limits: StoreLimits = { ...defaults, maxLogIdBytes, ...checks.limits(given) }
  if (limits.maxLogIdBytes! > maxLogIdBytes) {
    checks.invalid(
      'limits.maxLogIdBytes',
      `at most ${maxLogIdBytes} (what S3's 1024-byte keys leave after this prefix)`,
      limits.maxLogIdBytes,
    )
  }
  return limits
}
