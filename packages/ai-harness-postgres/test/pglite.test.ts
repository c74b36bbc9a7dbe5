import { PGlite } from '@electric-sql/pglite'
import { afterAll, expect, it } from 'vitest'
import { type PGliteLike, postgresStore } from '../src/index.js'
import { freshSchema } from './support.js'

// PGlite parses and plans every query() again; the store prepares each statement once per
// instance and runs it with EXECUTE.

const db = new PGlite()
afterAll(() => db.close())

/** The PGlite instance, counting what the store sends. */
function counted() {
  const sent: string[] = []
  const client: PGliteLike = {
    query: (text, params) => {
      sent.push(text)
      return db.query(text, params)
    },
    exec: (text) => {
      sent.push(text)
      return db.exec(text)
    },
    transaction: (callback) => db.transaction(callback),
    close: async () => {},
  }
  return { client, sent, prepares: () => sent.filter((t) => t.startsWith('PREPARE')).length }
}

it('prepares each statement once per PGlite instance, shared by every store on it, and runs it with EXECUTE', async () => {
  const { client, sent, prepares } = counted()
  const schema = freshSchema('prepared')
  const [a, b] = [postgresStore({ client, schema }), postgresStore({ client, schema })]
  await a.migrate()
  // migrate() prepares every statement with parameters, so a process that just opened the store pays no PREPARE later.
  const warm = prepares()
  expect(warm).toBeGreaterThan(10)
  for (let seq = 1; seq <= 5; seq++) await (seq % 2 ? a : b).append('s', seq, [{ type: 't', seq }])
  expect(prepares()).toBe(warm)
  expect(sent.filter((t) => t.startsWith('EXECUTE'))).toHaveLength(5)
  expect((await b.read('s')).map((e) => e.record.seq)).toEqual([1, 2, 3, 4, 5])
  expect(prepares()).toBe(warm)
  await b.migrate()
  expect(prepares(), 'a second migrate on the same PGlite prepares nothing again').toBe(warm)
})

it('prepares again when the app deallocated its statements, and after a failed prepare', async () => {
  const { client, prepares } = counted()
  const schema = freshSchema('deallocated')
  const store = postgresStore({ client, schema })
  await expect(store.append('s', 1, [{ type: 't' }])).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' }) // no tables yet
  await store.migrate()
  const warm = prepares() // the failed one, then every statement
  await store.append('s', 1, [{ type: 't' }])
  expect(prepares()).toBe(warm)
  await db.query('DEALLOCATE ALL')
  await store.append('s', 2, [{ type: 't' }])
  expect((await store.read('s')).map((e) => e.seq)).toEqual([1, 2])
  expect(prepares()).toBe(warm + 2) // append again, read again
})
