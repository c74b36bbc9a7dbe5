import { PGlite } from '@electric-sql/pglite'
import { createManualClock, type Lease } from '@tanstack/ai-harness/store'
import { startFaultProxy } from '@tanstack/ai-harness/testing/node'
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import type { NamedQuery, PgPoolClientLike, PgPoolLike } from '../src/driver-types.js'
import { type PostgresStore, postgresStore } from '../src/index.js'
import { faultyClient, pgError } from './faulty-pglite.js'
import { freshSchema, pgConfig } from './support.js'

// Group commit: appends of concurrent sessions on one store instance that arrive while a
// round trip is in flight go out together in the next one, each with its own outcome.

const TTL = 30_000
/** The group statement (many sessions' appends in one): its text unnests the log ids. */
const isGroup = (text: string) => text.includes('unnest($1::text[], $2::bigint[], $3::int[]')
const isOneAppend = (text: string) => text.includes('INSERT INTO') && text.includes('log_entries') && !isGroup(text)
const rec = (tag: string, n = 1) => Array.from({ length: n }, (_, i) => ({ type: 't', tag, i }))

type Plan = (text: string) => { error: unknown; when: 'before' | 'after' } | undefined

/** A pg Pool that shows the store's statements to `plan` (which may fail them) and keeps their texts. */
function watchedPool(pool: pg.Pool, plan: Plan = () => undefined): PgPoolLike & { calls: string[] } {
  const calls: string[] = []
  return {
    calls,
    get totalCount() {
      return pool.totalCount
    },
    query: (text, values) => pool.query(text as string, values),
    end: () => pool.end(),
    async connect(): Promise<PgPoolClientLike> {
      const client = await pool.connect()
      return {
        async query(config: string | NamedQuery, values?: unknown[]) {
          const text = typeof config === 'string' ? config : config.text
          calls.push(text)
          const fault = plan(text)
          if (fault?.when === 'before') throw fault.error
          const result = await client.query(config as string, values)
          if (fault?.when === 'after') throw fault.error
          return result
        },
        release: (error) => client.release(error),
        on: (event, listener) => client.on(event, listener),
        removeListener: (event, listener) => client.removeListener(event, listener),
      }
    },
  }
}

interface Side {
  readonly name: 'pg' | 'PGlite'
  /** A store on a fresh schema whose statements `calls` records and `plan` may fail; and a plain one on the same schema. */
  open(plan?: Plan, retries?: number): Promise<{ store: PostgresStore; other: PostgresStore; calls: string[]; schema: string }>
  close(): Promise<void>
}

function side(name: 'pg' | 'PGlite'): Side {
  const cleanups: Array<() => Promise<unknown>> = []
  let lite: PGlite | undefined
  const clock = createManualClock()
  return {
    name,
    async open(plan, retries = 3) {
      const schema = freshSchema('group')
      const retry = { retries, baseMs: 1, maxMs: 5 }
      if (name === 'PGlite') {
        lite ??= new PGlite()
        const client = faultyClient(lite, plan ?? (() => undefined))
        const store = postgresStore({ client, schema, clock, retry })
        await store.migrate()
        return { store, other: postgresStore({ client: lite, schema, clock }), calls: client.calls, schema }
      }
      const pool = new pg.Pool({ ...pgConfig(), max: 4 })
      pool.on('error', () => {})
      const otherPool = new pg.Pool({ ...pgConfig(), max: 2 })
      const watched = watchedPool(pool, plan)
      const store = postgresStore({ client: watched, schema, clock, retry })
      const other = postgresStore({ client: otherPool, schema, clock })
      await other.migrate()
      cleanups.push(async () => {
        await store.close()
        await other.close()
        await otherPool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
        await Promise.all([pool.end(), otherPool.end()])
      })
      return { store, other, calls: watched.calls, schema }
    },
    async close() {
      for (const cleanup of cleanups) await cleanup()
      await lite?.close()
    },
  }
}

describe.each(['pg', 'PGlite'] as const)('group commit (%s)', (name) => {
  const db = side(name)
  afterAll(() => db.close())

  it('sends the appends of many sessions that arrive together in fewer round trips, each landing once', async () => {
    const { store, other, calls } = await db.open()
    const ids = Array.from({ length: 24 }, (_, i) => `s${i}`)
    await Promise.all(ids.map((id) => store.append(id, 1, rec(id, (id.length % 3) + 1))))
    const appends = calls.filter((text) => isGroup(text) || isOneAppend(text))
    expect(appends.length).toBeLessThan(ids.length)
    expect(appends.some(isGroup)).toBe(true)
    for (const id of ids) expect((await other.read(id)).map((e) => e.record)).toEqual(rec(id, (id.length % 3) + 1))
  })

  it('still sends a lone append as one statement, at once', async () => {
    const { store, calls } = await db.open()
    calls.length = 0
    expect(await store.append('alone', 1, rec('a', 2))).toEqual({ nextSeq: 3 })
    expect(calls.filter((text) => isGroup(text) || isOneAppend(text))).toHaveLength(1)
    expect(calls.some(isGroup)).toBe(false)
  })

  it('keeps two appends of one log apart: the first lands, the second conflicts', async () => {
    const { store, other } = await db.open()
    await Promise.all(['x', 'y', 'z'].map((id) => store.append(id, 1, rec(id))))
    const results = await Promise.allSettled([
      store.append('x', 2, rec('first')),
      store.append('y', 2, rec('y2')),
      store.append('x', 2, rec('second')),
      store.append('z', 2, rec('z2')),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'LOG_CONFLICT' })
    expect((await other.read('x')).map((e) => e.record.tag)).toEqual(['x', 'first'])
  })

  it('gives each append of a mixed group its own outcome: landed, LOG_CONFLICT, LEASE_LOST (generated)', async () => {
    const { store, other, calls } = await db.open()
    let round = 0
    await fc.assert(
      fc.asyncProperty(fc.array(sessionCase, { minLength: 2, maxLength: 12 }), async (cases) => {
        round++
        const prepared = await Promise.all(cases.map((c, i) => prepare(other, `r${round}-${i}`, c)))
        calls.length = 0
        const settled = await Promise.allSettled(
          prepared.map((p) => store.append(p.logId, p.expectedSeq, rec(p.logId, p.records), p.lease ? { lease: p.lease } : undefined)),
        )
        settled.forEach((result, i) => {
          const p = prepared[i]!
          if (p.expect === 'landed') expect(result).toEqual({ status: 'fulfilled', value: { nextSeq: p.expectedSeq + p.records } })
          else if (p.expect === 'LEASE_LOST') expect(result).toMatchObject({ status: 'rejected', reason: { code: 'LEASE_LOST' } })
          else expect(result).toMatchObject({ status: 'rejected', reason: { code: 'LOG_CONFLICT', actualNextSeq: p.length + 1 } })
        })
        for (const p of prepared) {
          const tags = (await other.read(p.logId)).map((e) => e.record.tag)
          expect(tags).toEqual([...Array(p.length).fill('setup'), ...Array(p.expect === 'landed' ? p.records : 0).fill(p.logId)])
        }
        if (cases.length > 3) expect(calls.some(isGroup)).toBe(true)
      }),
      { numRuns: name === 'pg' ? 25 : 15 },
    )
  })

  it('a group whose reply is lost: every append is unknown, the retry finds the landed ones as LOG_CONFLICT, none lands twice', async () => {
    let lose = true
    const lost: Plan = (text) => {
      if (!isGroup(text) || !lose) return undefined
      lose = false
      return { error: pgError('ECONNRESET', 'read ECONNRESET (injected: the group landed, its reply was lost)'), when: 'after' }
    }
    const { store, other, calls } = await db.open(lost)
    const ids = Array.from({ length: 10 }, (_, i) => `lost${i}`)
    const settled = await Promise.allSettled(ids.map((id) => store.append(id, 1, rec(id))))
    expect(lose).toBe(false)
    const grouped = new Set(ids.filter((_, i) => settled[i]!.status === 'rejected'))
    expect(grouped.size).toBeGreaterThan(1)
    for (const [i, result] of settled.entries()) {
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'LOG_CONFLICT' })
      // The read-back rule: whatever the outcome said, the log holds the append exactly once.
      expect((await other.read(ids[i]!)).map((e) => e.record.tag)).toEqual([ids[i]])
    }
    expect(calls.filter(isGroup).length).toBeGreaterThanOrEqual(2) // the group, and its retry
  })

  it('a group whose reply is lost with no retries left: every append in it fails STORE_UNAVAILABLE, and each landed once', async () => {
    let lose = true
    const lost: Plan = (text) => {
      if (!isGroup(text) || !lose) return undefined
      lose = false
      return { error: pgError('ECONNRESET', 'read ECONNRESET (injected)'), when: 'after' }
    }
    const { store, other } = await db.open(lost, 0)
    const ids = Array.from({ length: 10 }, (_, i) => `none${i}`)
    const settled = await Promise.allSettled(ids.map((id) => store.append(id, 1, rec(id))))
    const unknown = settled.filter((r) => r.status === 'rejected')
    expect(unknown.length).toBeGreaterThan(1)
    for (const result of unknown) expect(result).toMatchObject({ reason: { code: 'STORE_UNAVAILABLE' } })
    for (const id of ids) expect((await other.read(id)).map((e) => e.record.tag)).toEqual([id])
  })

  it('a group that fails with a unique violation sends each append alone: only the one that raced conflicts', async () => {
    let violate = true
    const violation: Plan = (text) => {
      if (!isGroup(text) || !violate) return undefined
      violate = false
      return { error: pgError('23505', 'duplicate key value violates unique constraint (injected)'), when: 'before' }
    }
    const { store, other } = await db.open(violation)
    await Promise.all(['a', 'b', 'c'].map((id) => store.append(id, 1, rec(id))))
    await other.append('b', 2, rec('other'))
    // Two fillers take the round trips that go out at once; the rest go as one group.
    const ids = ['f1', 'f2', 'a', 'b', 'c', 'd']
    const settled = await Promise.allSettled(ids.map((id) => store.append(id, ['a', 'b', 'c'].includes(id) ? 2 : 1, rec(`${id}2`))))
    expect(violate).toBe(false)
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
    expect((settled[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 3 })
    expect((await other.read('b')).map((e) => e.record.tag)).toEqual(['b', 'other'])
  })
})

describe('group commit racing a writer on another connection (pg)', () => {
  it('a group that meets an uncommitted row of its log fails whole with a unique violation; each append then goes alone', async () => {
    const db = side('pg')
    const admin = new pg.Client(pgConfig())
    await admin.connect()
    try {
      const { store, other, schema } = await db.open()
      await Promise.all(['a', 'b', 'c'].map((id) => store.append(id, 1, rec(id))))
      // Another connection writes seq 2 of "b" and keeps its transaction open: the group cannot see the row.
      await admin.query('BEGIN')
      await admin.query(`INSERT INTO "${schema}".harness_log_entries (log_id, seq, record) VALUES ('b', 2, '{"type":"t","tag":"racer"}')`)
      const ids = ['f1', 'f2', 'a', 'b', 'c', 'd']
      const appending = Promise.allSettled(ids.map((id) => store.append(id, ['a', 'b', 'c'].includes(id) ? 2 : 1, rec(`${id}2`))))
      // The group waits for the racer's row lock; then the racer commits.
      for (let i = 0; i < 500; i++) {
        const { rows } = await admin.query(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%unnest($1::text[], $2::bigint[]%'",
        )
        if (rows.length > 0) break
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      await admin.query('COMMIT')
      const settled = await appending
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
      expect((settled[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'LOG_CONFLICT', actualNextSeq: 3 })
      expect((await other.read('b')).map((e) => e.record.tag)).toEqual(['b', 'racer'])
      for (const id of ['a', 'c']) expect((await other.read(id)).map((e) => e.record.tag)).toEqual([id, `${id}2`])
    } finally {
      await admin.end()
      await db.close()
    }
  })
})

describe('group commit through a proxy that cuts the connection mid-group (pg)', () => {
  it('every append of the cut group is retried or reported, and none lands twice', async () => {
    const proxy = await startFaultProxy({ target: { host: String(pgConfig().host), port: Number(pgConfig().port) } })
    const schema = freshSchema('groupcut')
    const admin = new pg.Pool({ ...pgConfig(), max: 1 })
    const pool = new pg.Pool({ ...pgConfig(), host: proxy.host, port: proxy.port, max: 4 })
    pool.on('error', () => {})
    try {
      const store = postgresStore({ client: pool, schema, retry: { retries: 3, baseMs: 1, maxMs: 5 } })
      const reader = postgresStore({ client: admin, schema })
      await reader.migrate()
      // The group statement's text goes out in its Parse message, the first time on a connection.
      const cut = proxy.rule({ when: 'unnest($1::text[], $2::bigint[]', action: 'cut-reply' })
      const ids = Array.from({ length: 12 }, (_, i) => `cut${i}`)
      const settled = await Promise.allSettled(ids.map((id) => store.append(id, 1, rec(id))))
      expect(cut.hits).toBe(1)
      for (const [i, result] of settled.entries()) {
        if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'LOG_CONFLICT' })
        expect((await reader.read(ids[i]!)).map((e) => e.record.tag)).toEqual([ids[i]])
      }
      await store.close()
    } finally {
      await pool.end().catch(() => {})
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await admin.end()
      await proxy.close()
    }
  })
})

// ---- generated cases -------------------------------------------------------------

interface SessionCase {
  /** Entries in the log before the append. */
  readonly length: number
  /** The append's seq, relative to the right one (length + 1). */
  readonly offset: -1 | 0 | 1
  readonly records: number
  readonly lease: 'none' | 'current' | 'superseded'
}

const sessionCase: fc.Arbitrary<SessionCase> = fc.record({
  length: fc.integer({ min: 0, max: 3 }),
  offset: fc.constantFrom(-1 as const, 0 as const, 0 as const, 1 as const),
  records: fc.integer({ min: 1, max: 3 }),
  lease: fc.constantFrom('none' as const, 'current' as const, 'superseded' as const),
})

interface Prepared {
  readonly logId: string
  readonly length: number
  readonly expectedSeq: number
  readonly records: number
  readonly lease: Lease | undefined
  readonly expect: 'landed' | 'LOG_CONFLICT' | 'LEASE_LOST'
}

/** Writes the case's log and lease through `other`, and says what the append must do. */
async function prepare(other: PostgresStore, logId: string, c: SessionCase): Promise<Prepared> {
  if (c.length > 0) await other.append(logId, 1, Array(c.length).fill({ type: 't', tag: 'setup' }))
  let lease: Lease | undefined
  if (c.lease !== 'none') {
    lease = await other.leases.acquire(logId, 'host-a', TTL)
    // Superseded: the same owner again draws a greater fence, so the first lease is no longer current.
    if (c.lease === 'superseded') await other.leases.acquire(logId, 'host-a', TTL)
  }
  const expectedSeq = Math.max(1, c.length + 1 + c.offset)
  const right = expectedSeq === c.length + 1
  const expect = c.lease === 'superseded' ? 'LEASE_LOST' : right ? 'landed' : 'LOG_CONFLICT'
  return { logId, length: c.length, expectedSeq, records: c.records, lease, expect }
}
