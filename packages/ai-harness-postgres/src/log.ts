/**
 * The log: append (one INSERT whose primary key is the compare-and-set), read, delete.
 * The statements and why they are safe are in `sql.ts`.
 */
import {
  type AppendOptions,
  type AppendResult,
  assertExpectedSeq,
  assertLogId,
  checkLease,
  HarnessError,
  type Lease,
  LeaseLostError,
  LogConflictError,
  type LogEntry,
  type LogRecord,
  prepareBatch,
  type ReadOptions,
} from '@tanstack/ai-harness/store'
import type { Row } from './driver-types.js'
import { groupCommit, type QueuedAppend } from './group-commit.js'
import { sqlLimit } from './sql-arguments.js'
import { type StoreContext, sqlStateOf } from './context.js'
import { lostLiveness } from './leases.js'

/**
 * Rounds of `delete` after the first before it gives up for this try: each round can only
 * meet an unfenced append that locked its predecessor before the delete did, so more
 * than a few means a writer appending as fast as the delete deletes.
 */
const MAX_DELETE_ROUNDS = 20

/**
 * Append round trips a store on a pg Pool keeps under way at once; appends beyond them
 * wait for one to end and go out together. Two, so one append held up (by a lock, by a
 * slow connection) does not hold up every session of the instance.
 */
const POOL_APPENDS_IN_FLIGHT = 2

/** Appends in one group: a statement of at most this many sessions' rows. */
const MAX_GROUP_APPENDS = 64

const noError = (): undefined => undefined

const leaseLost = (logId: string) =>
  new LeaseLostError(
    logId,
    'is no longer the current lease (a newer lease, a release or a delete came after it), so the append wrote nothing',
  )

export interface LogOperations {
  append(logId: string, expectedSeq: number, records: readonly LogRecord[], options?: AppendOptions): Promise<AppendResult>
  read(logId: string, options?: ReadOptions): Promise<LogEntry[]>
  delete(logId: string): Promise<void>
}

// long: append (alone and grouped), read and delete share the statements and the lease check; each is a few lines
export function logOperations(ctx: StoreContext): LogOperations {
  const { driver, sql, limits } = ctx

  /**
   * Why an append wrote nothing, as the typed error: LEASE_LOST when its lease is no longer
   * the session's current one, else LOG_CONFLICT with the log's actual next seq. One more
   * round trip, only on a refusal.
   */
  async function refusal(logId: string, expectedSeq: number, lease: Lease | undefined, cause?: unknown): Promise<HarnessError> {
    let row: Record<string, unknown> | undefined
    try {
      ;[row] = await driver.query(sql.appendRefused, [logId, lease?.owner ?? null, lease?.fence ?? null])
    } catch {
      row = undefined // only decides which refusal to report; nothing was written either way
    }
    if (lease && row?.lease_held === false) return leaseLost(logId)
    const actual = row === undefined ? undefined : row.last_seq === null ? 1 : Number(row.last_seq) + 1
    return new LogConflictError(
      logId,
      expectedSeq,
      actual === expectedSeq ? undefined : actual,
      cause === undefined ? undefined : { cause },
    )
  }

  /** Today's one-append statement: one round trip, and a second one only for a refusal. */
  async function appendOne({ logId, expectedSeq, json, lease }: QueuedAppend): Promise<void> {
    const one = json.length === 1
    const text = lease ? (one ? sql.appendOneFenced : sql.appendManyFenced) : one ? sql.appendOne : sql.appendMany
    const params = [logId, expectedSeq, one ? json[0] : json, ...(lease ? [lease.owner, lease.fence] : [])]
    // A retry after a lost reply finds its own rows: a unique violation, never a second copy.
    const rows = await ctx.run('append', async () => {
      try {
        return await driver.query(text, params)
      } catch (error) {
        // unique_violation: an entry already holds one of these seqs (and the lease, if any, held).
        if (sqlStateOf(error) === '23505') throw await refusal(logId, expectedSeq, undefined, error)
        throw error
      }
    })
    if (rows.length !== json.length) throw await refusal(logId, expectedSeq, lease)
  }

  /**
   * Many sessions' appends in one statement. A lost reply leaves every one of them unknown:
   * the retry (of the whole statement) finds the rows of those that landed, which then
   * fail as LOG_CONFLICT, so the harness reads each of them back, as it does for one.
   */
  async function appendMany(appends: readonly QueuedAppend[]): Promise<readonly (unknown | undefined)[]> {
    const params = [
      appends.map((a) => a.logId),
      appends.map((a) => a.expectedSeq),
      appends.map((a) => a.json.length),
      appends.map((a) => a.lease?.owner ?? null),
      appends.map((a) => a.lease?.fence ?? null),
      appends.flatMap((a) => a.json),
    ]
    const rows = await ctx.run('append', async () => {
      try {
        return await driver.query(sql.appendBatch, params)
      } catch (error) {
        if (sqlStateOf(error) === '23505') return undefined
        throw error
      }
    })
    // A unique violation: one append raced a writer of its log on another connection. The
    // statement wrote nothing; each append goes again on its own, so only that one conflicts.
    if (rows === undefined) return Promise.all(appends.map((a) => appendOne(a).then(noError, (error: unknown) => error)))
    return appends.map((append, i) => outcome(append, rows[i]))
  }

  /** The append's error from its row of the batch, or undefined when it landed. */
  function outcome({ logId, expectedSeq, json, lease }: QueuedAppend, row: Row | undefined): HarnessError | undefined {
    if (row !== undefined && Number(row.landed) === json.length) return undefined
    if (lease && row?.held === false) return leaseLost(logId)
    const actual = row === undefined ? undefined : row.last_seq === null ? 1 : Number(row.last_seq) + 1
    return new LogConflictError(logId, expectedSeq, actual === expectedSeq ? undefined : actual)
  }

  const commit = groupCommit({
    maxInFlight: driver.kind === 'pg-pool' ? POOL_APPENDS_IN_FLIGHT : 1,
    maxAppends: MAX_GROUP_APPENDS,
    maxBytes: limits.maxBatchBytes,
    one: appendOne,
    many: appendMany,
  })

  return {
    async append(logId, expectedSeq, records, options) {
      assertLogId(logId, limits)
      assertExpectedSeq(expectedSeq)
      const lease = options?.lease === undefined ? undefined : checkLease(options.lease, limits, 'append lease')
      if (lease && ctx.liveness.lost(lease.fence)) throw lostLiveness(logId)
      // Every limit is checked before the database sees a byte.
      const batch = prepareBatch(records, limits)
      if (batch.json.length === 0) return { nextSeq: expectedSeq }
      await commit({ logId, expectedSeq, json: batch.json, bytes: batch.bytes, lease })
      return { nextSeq: expectedSeq + batch.json.length }
    },

    async read(logId, readOptions = {}) {
      assertLogId(logId, limits)
      const { after: from = 0, limit: max } = readOptions
      if (typeof from !== 'number' || Number.isNaN(from)) {
        throw new HarnessError('INVALID_ARGUMENT', `read's after must be a seq (a number >= 0), not ${String(from)}.`)
      }
      const after = Math.max(0, Math.floor(from))
      const limit = max === undefined ? null : sqlLimit(max, "read's limit")
      const last = limit === null ? Number.MAX_SAFE_INTEGER : after + limit
      const rows = await ctx.run('read', () => driver.query(sql.read, [logId, after, last, limit]))
      return rows.map((row) => ({ seq: Number(row.seq), record: JSON.parse(String(row.record)) as LogRecord }))
    },

    async delete(logId) {
      assertLogId(logId, limits)
      await ctx.run('delete', () =>
        driver.transaction(async (tx) => {
          await tx.query(sql.deleteLog, [logId])
          // Fresh snapshots until one sees no entry: the appends the first round waited for.
          for (let round = 1; ; round++) {
            const [row] = await tx.query(sql.deleteEntries, [logId])
            if (Number(row?.deleted ?? 0) === 0) return
            if (round >= MAX_DELETE_ROUNDS) {
              // 40001 (serialization failure) is transient: the whole delete is rolled back and tried again.
              throw Object.assign(new Error(`delete of ${JSON.stringify(logId)} kept meeting new appends`), { code: '40001' })
            }
          }
        }),
      )
    },
  }
}
