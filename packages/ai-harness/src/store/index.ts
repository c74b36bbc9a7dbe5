/**
 * `@tanstack/ai-harness/store` — everything a store author needs, and nothing of the
 * runtime: the contract's types, the checks every store runs before it writes
 * (`prepareAppend`, or `assertLogId` + `assertExpectedSeq` + `prepareBatch`), the typed
 * errors a store throws, retries with backoff, paged reads, the time range and clocks;
 * and the plumbing every store shares, so every store behaves the same: the default
 * limits, the checks of lease and wakeup arguments, the checks of a store factory's
 * options (`optionChecks`), the order of due wakeups, the network errors worth a retry, the
 * `retry` option's shape and check, and a bounded cache.
 *
 * ```ts
 * import { type HarnessStore, prepareAppend, LogConflictError } from '@tanstack/ai-harness/store'
 * ```
 * @packageDocumentation
 */
export type {
  AppendOptions,
  AppendResult,
  Clock,
  HarnessStore,
  Lease,
  LeaseStore,
  ListSessionsOptions,
  LogEntry,
  LogRecord,
  ReadOptions,
  SessionListStore,
  StoreLimits,
  Wakeup,
  WakeupStore,
} from '../contract/types.js'
export { DEFAULT_MAX_LOG_ID_BYTES, MAX_TIME_MS, WAITING_FOR_PERSON } from '../contract/types.js'
export { ASSUMED_CLOCK_SKEW_MS, EXPIRY_ONLY_LEASE_MS } from './lease-defaults.js'
export type { JsonObject, JsonPrimitive, JsonValue } from '../json/json-types.js'
export {
  type HarnessErrorCode,
  type HarnessErrorOptions,
  HarnessError,
  isHarnessError,
  LeaseHeldError,
  LeaseLostError,
  LogConflictError,
  RecordTooLargeError,
} from '../contract/errors.js'
export {
  assertExpectedSeq,
  assertLease,
  assertLogId,
  isWellFormedText,
  type PreparedBatch,
  prepareAppend,
  prepareBatch,
} from '../contract/prepare-batch.js'
export { assertStoreLimits, MIN_STORE_LIMITS, maxLogIdBytesOf, storeLimitsProblems } from '../contract/store-limits.js'
export { DEFAULT_RETRIES, type RetryOptions, withRetry } from '../contract/retry.js'
export { forEachPage, readAll } from '../contract/read-all.js'
export {
  checkListSessionsOptions,
  compareCodePoints,
  DEFAULT_SESSION_PAGE,
  MAX_SESSION_PAGE,
} from '../contract/list-sessions.js'
export { createManualClock, type ManualClock, systemClock } from '../contract/clock.js'
export { utf8Length } from '../json/check-json.js'
export { checkCount, checkDuration, checkLease, checkLeaseTtl, checkOwner, checkTime, leaseExpiry, timeAfter } from './arguments.js'
export { compareWakeups } from './wakeup-order.js'
export { isNetworkError, NETWORK_ERROR_CODES } from './network-errors.js'
export { checkRetryOptions, type StoreRetryOptions } from './retry-options.js'
export { type ClientKinds, isObject, MAX_TIMER_MS, type OptionChecks, optionChecks } from './option-checks.js'
export { boundedMap } from './bounded-map.js'
export { DEFAULT_STORE_LIMITS } from './default-limits.js'
export { settleWithin, withRequestDeadline } from './request-deadline.js'
