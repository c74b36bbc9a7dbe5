import { HarnessError, utf8Length } from '@tanstack/ai-harness/store'

/**
 * The key layout of the harness table, in one place.
 *
 * Every item of a session lives in one partition, `pk = <namespace>|<logId>`:
 *
 * | item    | sk                      | other attributes                           |
 * | ------- | ----------------------- | ------------------------------------------ |
 * | batch   | `b#<first seq, 16 dig>` | `n` record count, `r` records as JSON text |
 * | lease   | `lease`                 | `o` owner, `f` fence, `x` expiry, `h` held |
 * | wakeup  | `wakeup`                | `wk` index partition, `at` due time, `c`   |
 *
 * The namespace is URL-encoded, so it never contains `|` and the first `|` ends it:
 * two (namespace, logId) pairs never share a key. The log id follows verbatim, so
 * `a` and `a1`, or ids with `:` `/` `%` and spaces, are different partitions.
 */

/** Attribute names. Short, because DynamoDB bills their bytes on every item. */
export const ATTR = {
  pk: 'pk',
  sk: 'sk',
  count: 'n',
  records: 'r',
  owner: 'o',
  fence: 'f',
  expiresAt: 'x',
  held: 'h',
  wakeupPartition: 'wk',
  wakeupAt: 'at',
  claimToken: 'c',
} as const

/** The global secondary index that lists wakeups by due time. */
export const WAKEUP_INDEX = 'wakeups'

export const LEASE_SK = 'lease'
export const WAKEUP_SK = 'wakeup'
const BATCH_PREFIX = 'b#'
const SEQ_DIGITS = 16

/** DynamoDB's limit on a partition key value. */
export const MAX_PARTITION_KEY_BYTES = 2048

/** Sort key of the batch whose first record has `seq`: zero-padded so text order is number order. */
export function batchSk(firstSeq: number): string {
  return BATCH_PREFIX + String(firstSeq).padStart(SEQ_DIGITS, '0')
}

/** Bounds for a key condition over all batches of a log. */
export const FIRST_BATCH_SK = batchSk(0)
export const LAST_BATCH_SK = BATCH_PREFIX + '9'.repeat(SEQ_DIGITS)

/** The first seq of a batch, from its sort key. */
export function firstSeqOf(sk: string): number {
  return Number(sk.slice(BATCH_PREFIX.length))
}

/** Keys of one namespace of the table. */
export interface KeyLayout {
  /** Every partition key of the namespace begins with it. */
  readonly prefix: string
  /** The partition of the namespace's wakeup index. */
  readonly wakeupPartition: string
  /** The partition key of a session; throws INVALID_ARGUMENT for ids too long for DynamoDB. */
  pk(logId: string): string
  /** The session id of a partition key of this namespace. */
  logIdOf(pk: string): string
}

export function keyLayout(namespace: string): KeyLayout {
  const prefix = `${encodeURIComponent(namespace)}|`
  const room = MAX_PARTITION_KEY_BYTES - utf8Length(prefix)
  return {
    prefix,
    wakeupPartition: `w|${prefix}`,
    pk(logId) {
      if (utf8Length(logId) > room) {
        throw new HarnessError(
          'INVALID_ARGUMENT',
          `A log id may be at most ${room} bytes of UTF-8 in this namespace; use a shorter session id.`,
        )
      }
      return prefix + logId
    },
    logIdOf: (pk) => pk.slice(prefix.length),
  }
}

/** A string attribute the store wrote itself; its absence means the item was changed outside the store. */
export function stringAttr(item: Record<string, { S?: string }> | undefined, name: string): string {
  const value = item?.[name]?.S
  if (value === undefined)
    throw new HarnessError('SESSION_CORRUPT', `An item is missing its "${name}" attribute; was the table written outside this store?`)
  return value
}

/** A number attribute the store wrote itself. */
export function numberAttr(item: Record<string, { N?: string }> | undefined, name: string): number {
  const value = item?.[name]?.N
  if (value === undefined)
    throw new HarnessError('SESSION_CORRUPT', `An item is missing its "${name}" attribute; was the table written outside this store?`)
  return Number(value)
}
