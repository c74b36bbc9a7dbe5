import assert from 'node:assert/strict'
import { compareCodePoints, type HarnessStore, MAX_SESSION_PAGE } from '@tanstack/ai-harness/store'
import { assertSame, type CaseContext, defineCase } from '../case.js'
import { listAll } from '../model/listing.js'

/**
 * How long a listing may lag behind writes that have resolved: the contract lets a store
 * serve listings from an index that catches up a moment later (a DynamoDB global secondary
 * index). The cases wait this long for it to settle, and check every listing on the way.
 */
export const LISTING_SETTLE_MS = 10_000

const SESSIONS = 2_000
const id = (i: number) => `u-${String(i).padStart(5, '0')}`

/**
 * Lists until the listing equals `expected` (a lagging index catches up), at most
 * {@link LISTING_SETTLE_MS}. Every listing on the way must be in order, once each, and list
 * only ids in `ever` (ids that held a record at some time): lag never invents a session.
 */
export async function settledListing(
  store: HarnessStore,
  limit: number,
  expected: readonly string[],
  ever: ReadonlySet<string>,
  what: string,
): Promise<void> {
  const deadline = performance.now() + LISTING_SETTLE_MS
  for (;;) {
    const got = await listAll(store.sessions!, 'list', limit, what)
    const invented = got.find((x) => !ever.has(x))
    if (invented !== undefined) assert.fail(`${what}: listed ${JSON.stringify(invented)}, which never held a record`)
    if (got.length === expected.length && got.every((x, i) => x === expected[i])) return
    if (performance.now() > deadline) {
      const missing = expected.filter((x) => !got.includes(x))
      const extra = got.filter((x) => !expected.includes(x))
      assert.fail(
        `${what}: ${LISTING_SETTLE_MS} ms after the last write the listing still lacks ${missing.length} sessions (${JSON.stringify(missing.slice(0, 5))}) and holds ${extra.length} deleted ones (${JSON.stringify(extra.slice(0, 5))}): a listing may lag behind writes for a moment, never for good. A page that ends early (an index page of deleted entries returned as an empty page) ends the listing: skip deleted entries and keep reading until a page has ids or the index ends`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Runs `work(i)` for every i below `count`, spread over `writers` racers, each one call at a time. */
async function spread(context: CaseContext, count: number, work: (store: HarnessStore, i: number) => Promise<unknown>): Promise<void> {
  // A store whose instances cannot run at once (skip.races) writes from its one instance.
  const writers = context.options.skip?.races
    ? [context.store]
    : await Promise.all(Array.from({ length: Math.min(context.concurrency, 8) }, () => context.openRacer()))
  await Promise.all(
    writers.map(async (writer, w) => {
      for (let i = w; i < count; i += writers.length) await work(writer, i)
    }),
  )
}

/** Which of the sessions the case deletes: runs longer than any page, at the start, middle and end, and scattered ones. */
const deleted = (i: number) => i < 50 || (i >= 600 && i < 1_700) || (i >= 300 && i < 500 && i % 2 === 0) || i >= SESSIONS - 100

export const listingScaleCases = [
  defineCase({
    id: 'sessions.list.scale',
    title: `${SESSIONS} sessions started concurrently from several writers, runs of deleted ones longer than a page: every page size and every cursor lists each live session once, in order`,
    requires: ['sessions'],
    async run(context) {
      const ever = new Set(Array.from({ length: SESSIONS }, (_, i) => id(i)))
      await spread(context, SESSIONS, (store, i) => store.append(id(i), 1, [{ type: 'scale', i }]))
      await spread(context, SESSIONS, async (store, i) => (deleted(i) ? store.delete(id(i)) : undefined))
      const live = [...ever].filter((_, i) => !deleted(i)).sort(compareCodePoints)
      const { store } = context
      await settledListing(
        store,
        MAX_SESSION_PAGE,
        live,
        ever,
        `sessions.list in pages of ${MAX_SESSION_PAGE} after ${SESSIONS} starts and ${SESSIONS - live.length} deletes`,
      )
      assertSame(await listAll(store.sessions!, 'list', 97, 'pages of 97'), live, `sessions.list in pages of 97`)
      // Cursors at the edges of every deleted run, on deleted ids (no session) and on live ones.
      for (const cursor of [
        id(49),
        id(50),
        id(599),
        id(600),
        id(1_200),
        id(1_699),
        id(1_700),
        id(301),
        id(302),
        id(SESSIONS - 101),
        id(SESSIONS - 1),
        'u-',
        'u-99999',
      ]) {
        const expected = live.filter((x) => compareCodePoints(x, cursor) > 0).slice(0, 25)
        const page = await store.sessions!.list({ after: cursor, limit: 25 })
        assert.ok(
          page.length > 0 || expected.length === 0,
          `sessions.list after ${JSON.stringify(cursor)} returned an empty page while ${expected.length > 0 ? 'sessions follow' : ''} ${JSON.stringify(expected.slice(0, 2))}: only an empty page ends a listing, so a run of deleted sessions must not yield one`,
        )
        assertSame(
          page,
          expected.slice(0, page.length),
          `sessions.list after ${JSON.stringify(cursor)} (limit 25): the ids right after the cursor, in order`,
        )
      }
    },
  }),
  defineCase({
    id: 'sessions.list.churn',
    title:
      'a listing read page by page while other writers start and delete sessions lists every session that lived throughout once, in order, and nothing that never had a record',
    requires: ['sessions'],
    async run(context) {
      const { store } = context
      const stable = Array.from({ length: 300 }, (_, i) => `s-${String(i * 2).padStart(4, '0')}`)
      const churn = Array.from({ length: 300 }, (_, i) => `s-${String(i * 2 + 1).padStart(4, '0')}`)
      const ever = new Set([...stable, ...churn])
      await spread(context, stable.length, (writer, i) => writer.append(stable[i]!, 1, [{ type: 'stable' }]))
      await settledListing(store, 100, stable, ever, 'sessions.list before the churn')
      // Pages read while odd ids are started and deleted between them.
      const reading = (async () => {
        const seen: string[] = []
        for (let round = 0; round < 3; round++)
          seen.push(...(await listAll(store.sessions!, 'list', 13, `a listing during churn (round ${round + 1})`)))
        return seen
      })()
      await spread(context, churn.length, async (writer, i) => {
        await writer.append(churn[i]!, 1, [{ type: 'churn' }])
        if (i % 3 !== 0) await writer.delete(churn[i]!)
      })
      const seen = await reading
      for (const x of seen) assert.ok(ever.has(x), `a listing during churn listed ${JSON.stringify(x)}, which never held a record`)
      const counts = new Map<string, number>()
      for (const x of seen) counts.set(x, (counts.get(x) ?? 0) + 1)
      for (const x of stable) {
        assert.equal(
          counts.get(x),
          3,
          `${JSON.stringify(x)} held a record throughout three listings read during churn, and was listed ${counts.get(x) ?? 0} times: a session that lives throughout a listing is listed in it (writes next to it must not hide it or list it twice)`,
        )
      }
      const expected = [...stable, ...churn.filter((_, i) => i % 3 === 0)].sort(compareCodePoints)
      await settledListing(store, 100, expected, ever, 'sessions.list after the churn')
    },
  }),
]
