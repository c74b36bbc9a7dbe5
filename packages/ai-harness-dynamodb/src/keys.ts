import { HarnessError, utf8Length } from '@tanstack/ai-harness/store'

/**
 * The key layout of the harness table, in one place.
 *
 * Every item of a session lives in one partition, `pk = <namespace>|<logId>`:
 *
 * | item      | sk                              | other attributes                           |
 * | --------- | ------------------------------- | ------------------------------------------ |
 * | batch     | `b#<gen, 10 dig>#<first seq, 16>` | `n` record count, `r` records as JSON text |
 * | tombstone | the sk of a batch slot          | `t` = true, nothing else (no records)      |
 * | deleted   | `d#<gen, 10 digits>`            | nothing: generation `gen` was deleted      |
 * | lease     | `lease`                         | `o` owner, `f` fence, `x` expiry, `h` held |
 * | wakeup    | `wakeup`                        | `wk` index partition, `at` due time, `c`   |
 *
 * Two global secondary indexes: `wakeups` (`wk`, `at`) lists wakeups by due time;
 * `sessions` (`ls`, `lid`) lists sessions by id. The first batch of a log (seq 1) carries
 * `ls` = the namespace's session partition and `lid` = the log id, so the index holds one
 * entry per log (a tombstone or an erased batch has neither: a deleted log drops out); a
 * wakeup at `WAITING_FOR_PERSON` carries `ls` = the namespace's waiting partition.
 *
 * A log lives in a generation (`gen`); `delete` ends it by putting a tombstone on every
 * batch slot of it (see `delete.ts`), and the next log of the same id starts in the
 * next generation at seq 1.
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
  tombstone: 't',
  owner: 'o',
  fence: 'f',
  expiresAt: 'x',
  held: 'h',
  wakeupPartition: 'wk',
  wakeupAt: 'at',
  claimToken: 'c',
  listPartition: 'ls',
  listId: 'lid',
} as const

/** The global secondary index that lists wakeups by due time. */
export const WAKEUP_INDEX = 'wakeups'
/** The global secondary index that lists sessions, and sessions waiting for a person, by id. */
export const SESSION_INDEX = 'sessions'

export const LEASE_SK = 'lease'
export const WAKEUP_SK = 'wakeup'

/** Sort key of the small item `delete` writes before it closes generation `gen`: readers check it cheaply. */
export const deletedSk = (gen: number) => `d#${String(gen).padStart(GEN_DIGITS, '0')}`
const BATCH_PREFIX = 'b#'
const GEN_DIGITS = 10
const SEQ_DIGITS = 16
const BATCH_SK = /^b#(\d{10})#(\d{16})$/

/** DynamoDB's limit on a partition key value. */
export const MAX_PARTITION_KEY_BYTES = 2048

/**
 * Sort key of the batch slot of generation `gen` whose first record has `seq`:
 * zero-padded, so text order is (generation, seq) order.
 */
export function batchSk(gen: number, firstSeq: number): string {
  return `${BATCH_PREFIX}${String(gen).padStart(GEN_DIGITS, '0')}#${String(firstSeq).padStart(SEQ_DIGITS, '0')}`
}

/** Bounds for a key condition over every batch slot of a log, in all generations. */
export const FIRST_BATCH_SK = BATCH_PREFIX
export const LAST_BATCH_SK = `${BATCH_PREFIX}~`

/** Bounds for a key condition over the batch slots of one generation. */
export const genBounds = (gen: number) => ({ from: batchSk(gen, 0), to: batchSk(gen, 10 ** SEQ_DIGITS - 1) })

/** The generation and first seq of a batch slot, from its sort key. */
export function slotOf(sk: string): { gen: number; first: number } {
  const match = BATCH_SK.exec(sk)
  if (!match) {
    throw new HarnessError(
      'SESSION_CORRUPT',
      `A batch item has the sort key ${JSON.stringify(sk)}, which this store never writes; was the table written outside this store?`,
    )
  }
  return { gen: Number(match[1]), first: Number(match[2]) }
}

/** Keys of one namespace of the table. */
export interface KeyLayout {
  /** Every partition key of the namespace begins with it. */
  readonly prefix: string
  /** The partition of the namespace's wakeup index. */
  readonly wakeupPartition: string
  /** The partition of the namespace's sessions in the `sessions` index. */
  readonly sessionPartition: string
  /** The partition of the namespace's sessions waiting for a person in the `sessions` index. */
  readonly waitingPartition: string
  /** The longest log id, in UTF-8 bytes, whose partition key fits DynamoDB's 2048 bytes. */
  readonly maxLogIdBytes: number
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
    sessionPartition: `s|${prefix}`,
    waitingPartition: `q|${prefix}`,
    maxLogIdBytes: room,
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

/** Where the log of an id is now: its live generation and the next free seq in it. */
export interface Tail {
  readonly gen: number
  readonly next: number
}
