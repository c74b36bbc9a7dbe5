import assert from 'node:assert/strict'
import {
  compareCodePoints,
  type HarnessStore,
  type ListSessionsOptions,
  type SessionListStore,
  WAITING_FOR_PERSON,
} from '@tanstack/ai-harness/store'
import { appendToNewLog, assertSame, defineCase, records } from '../case.js'
import { LOOK_ALIKE_IDS } from './log-id-cases.js'

const sessionsOf = (store: HarnessStore): SessionListStore => {
  assert.ok(store.sessions, 'the store has no sessions')
  return store.sessions
}

type Lister = (options?: ListSessionsOptions) => Promise<string[]>

/**
 * Reads a listing to its end as the paging rule says a reader must: pages of at most
 * `limit`, possibly shorter, each strictly after the last id of the one before, until
 * an empty page. Checks each page on the way.
 */
async function listAll(list: Lister, limit: number | undefined, what: string, after?: string): Promise<string[]> {
  const out: string[] = []
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 10_000, `${what}: the listing never reached an empty page`)
    const from = out.at(-1) ?? after
    const options: ListSessionsOptions = {}
    if (from !== undefined) options.after = from
    if (limit !== undefined) options.limit = limit
    const page = await list(options)
    assert.ok(Array.isArray(page), `${what}: a listing returns an array of ids`)
    if (limit !== undefined) assert.ok(page.length <= limit, `${what}: a page of ${page.length} ids for limit ${limit}`)
    if (page.length === 0) return out
    for (const id of page) {
      const last = out.at(-1) ?? from
      assert.equal(typeof id, 'string', `${what}: an id that is not a string: ${String(id)}`)
      if (last !== undefined && compareCodePoints(id, last) <= 0) {
        assert.fail(`${what}: ${JSON.stringify(id)} comes after ${JSON.stringify(last)} (ids come once each, in code point order)`)
      }
      out.push(id)
    }
  }
}

/** Ids that sort differently by UTF-16 unit and by code point, and ids that key encodings escape. */
const ORDER_IDS = ['a', 'a1', 'a b', 'a:b', 'a/b', 'a%2F', 'a~', 'b', 'B', '\u00e9', '\uffff', '\u{1F600}', '\ue000x', 'z']

/** Checks every page size against the expected ids, from the start and from each id. */
async function assertListing(list: Lister, expected: readonly string[], what: string): Promise<void> {
  for (const limit of [undefined, 1, 2, 3, 1000]) {
    assertSame(
      await listAll(list, limit, `${what}, pages of ${limit ?? 'the default'}`),
      expected,
      `${what}, pages of ${limit ?? 'the default'}`,
    )
  }
  for (const [i, id] of expected.entries()) {
    assertSame(
      await listAll(list, 7, `${what} after ${JSON.stringify(id)}`, id),
      expected.slice(i + 1),
      `${what} after ${JSON.stringify(id)}`,
    )
  }
}

const sorted = (ids: readonly string[]) => [...ids].sort(compareCodePoints)

export const sessionCases = [
  defineCase({
    id: 'sessions.list',
    title:
      'list returns every session with a record, each once, in code point order (astral after U+FFFF), in pages of any size after any id, from every instance',
    requires: ['sessions'],
    async run({ store, openStore }) {
      const ids = [...ORDER_IDS, ...LOOK_ALIKE_IDS]
      for (const id of ids) await appendToNewLog(store, id, records(1, id), 'the ids are all different')
      // A second batch adds no second entry to the listing.
      await store.append('a', 2, records(2, 'a again'))
      // An empty batch writes nothing, so it makes no session.
      await store.append('empty', 1, [])
      const expected = sorted(ids)
      await assertListing((o) => sessionsOf(store).list(o), expected, 'the writer')
      await assertListing((o) => sessionsOf(store).list(o), expected, 'another instance')
      const reader = sessionsOf(await openStore())
      const page = await reader.list({ after: 'a0', limit: 3 })
      const rest = expected.filter((id) => compareCodePoints(id, 'a0') > 0)
      assert.ok(page.length > 0, 'a page after an id that is no session is empty while sessions follow it')
      assertSame(page, rest.slice(0, page.length), 'a page after an id that is no session (a0)')
      assertSame(
        await listAll((o) => reader.list(o), 5, 'after an id that is no session', 'a0'),
        expected.filter((id) => compareCodePoints(id, 'a0') > 0),
        'the listing after an id that is no session (a0)',
      )
      assertSame(await listAll((o) => reader.list(o), 4, 'after the last id', expected.at(-1)), [], 'the listing after the last id')
    },
  }),
  defineCase({
    id: 'sessions.list.delete',
    title: 'a deleted session leaves the listing (its look-alikes stay); a new log of the same id is listed again',
    requires: ['sessions'],
    async run({ store, openStore }) {
      const ids = ['a', 'ab', 'a ', 'A', 'a/b', 'b']
      for (const id of ids) await appendToNewLog(store, id, records(3, id), 'the ids are all different')
      await store.delete('a')
      await store.delete('a/b')
      await store.delete('never-written')
      const other = sessionsOf(await openStore())
      assertSame(
        await listAll((o) => other.list(o), 2, 'after delete'),
        sorted(['ab', 'a ', 'A', 'b']),
        'the listing after deleting a and a/b',
      )
      await appendToNewLog(store, 'a', records(1, 'again'), 'a deleted log starts again at seq 1')
      assertSame(
        await listAll((o) => other.list(o), 2, 'after a new log'),
        sorted(['a', 'ab', 'a ', 'A', 'b']),
        'the listing after a new log of a',
      )
    },
  }),
  defineCase({
    id: 'sessions.list.namespace',
    title: "a namespace lists only its own sessions, and its deletes and waiting sessions do not touch another namespace's",
    requires: ['sessions', 'wakeups'],
    async run({ store, openNamespace }) {
      const other = await openNamespace()
      await appendToNewLog(store, 'mine', records(1, 'mine'), 'a fresh namespace')
      await appendToNewLog(store, 'both', records(1, 'both'), 'a fresh namespace')
      await appendToNewLog(other.store, 'theirs', records(1, 'theirs'), 'a fresh namespace')
      await appendToNewLog(other.store, 'both', records(1, 'both'), 'a fresh namespace')
      await store.wakeups!.schedule('both', WAITING_FOR_PERSON)
      assertSame(await listAll((o) => sessionsOf(store).list(o), 10, 'this namespace'), ['both', 'mine'], 'the listing of this namespace')
      assertSame(
        await listAll((o) => sessionsOf(other.store).list(o), 10, 'the other'),
        ['both', 'theirs'],
        'the listing of the other namespace',
      )
      assertSame(await listAll((o) => sessionsOf(other.store).waiting(o), 10, 'the other, waiting'), [], 'waiting in the other namespace')
      await other.store.delete('both')
      assertSame(
        await listAll((o) => sessionsOf(store).list(o), 10, 'this namespace'),
        ['both', 'mine'],
        'after a delete in the other namespace',
      )
      assertSame(
        await listAll((o) => sessionsOf(store).waiting(o), 10, 'waiting'),
        ['both'],
        'waiting after a delete in the other namespace',
      )
    },
  }),
  defineCase({
    id: 'sessions.waiting',
    title:
      'waiting lists exactly the sessions whose wakeup is at WAITING_FOR_PERSON, in code point order and pages; a new time, a cancel or a delete takes a session off it',
    requires: ['sessions', 'wakeups'],
    async run({ store, openStore, clock }) {
      const w = store.wakeups!
      const waiting = [...ORDER_IDS, 'sess', 'sess ', 'Sess', 'caf\u00e9', 'cafe\u0301']
      for (const id of waiting) await w.schedule(id, WAITING_FOR_PERSON)
      for (const id of ['soon', 'later', 'almost']) await w.schedule(id, clock.now() + 1000)
      await w.schedule('almost', WAITING_FOR_PERSON - 1)
      await w.schedule('due', clock.now() - 1)
      const other = sessionsOf(await openStore())
      await assertListing((o) => other.waiting(o), sorted(waiting), 'waiting')
      assert.deepEqual(
        (await w.due(100)).map((x) => x.logId),
        ['due'],
        'a session waiting for a person is never due',
      )
      await w.schedule('a', clock.now())
      await w.cancel('b')
      await store.delete('z')
      await w.schedule('soon', WAITING_FOR_PERSON)
      const left = sorted([...waiting.filter((id) => !['a', 'b', 'z'].includes(id)), 'soon'])
      assertSame(
        await listAll((o) => other.waiting(o), 3, 'after changes'),
        left,
        'waiting after a reschedule, a cancel, a delete and a new wait',
      )
      assert.deepEqual((await w.claim(100, 60_000)).map((x) => x.logId).sort(), ['a', 'due'], 'a claim takes the due wakeups only')
      assertSame(await listAll((o) => other.waiting(o), 1000, 'after a claim'), left, 'waiting after a claim of other sessions')
    },
  }),
]
