import { PGlite } from '@electric-sql/pglite'
import { createManualClock, oneStreamProblems, streamAcrossCrash } from '@tanstack/ai-harness/testing'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore } from '../src/index.js'
import { freshSchema, pgConfig } from './support.js'

// Issue 28: a turn's durable stream goes on across the crash of the host that streamed it.
const lite = new PGlite()
const pool = new pg.Pool({ ...pgConfig(), max: 4 })
pool.on('error', () => {})
afterAll(async () => {
  await lite.close()
  await pool.end()
})

const clients: Array<[string, PGlite | pg.Pool]> = [
  ['PGlite', lite],
  ['PostgreSQL', pool],
]

describe.each(clients)('one stream across a crash on %s', (_name, client) => {
  it('the reconnected client sees every chunk once, in order, and the checkout charged and invoiced once', async () => {
    const clock = createManualClock()
    const schema = freshSchema('stream_crash')
    const openStore = async () => postgresStore({ client, schema, clock })
    await (await openStore()).migrate()
    try {
      expect(oneStreamProblems(await streamAcrossCrash({ openStore, clock }))).toEqual([])
    } finally {
      await (client as Pick<pg.Pool, 'query'>).query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    }
  })
})
