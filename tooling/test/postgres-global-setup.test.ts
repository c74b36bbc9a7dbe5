import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import setup, { choosePostgres, modeOf, type Probe } from '../postgres-global-setup.js'

const nobody: Probe = { ok: false, answered: false, reason: 'ECONNREFUSED' }
const refused: Probe = { ok: false, answered: true, reason: '28P01: password authentication failed' }

describe('which PostgreSQL a test run uses', () => {
  it('auto: the server at the PG* settings when it answers, else one of our own', () => {
    expect(choosePostgres('auto', { ok: true }, false, 't')).toEqual({ use: 'external' })
    expect(choosePostgres('auto', { ok: true }, true, 't')).toEqual({ use: 'external' })
    expect(choosePostgres('auto', nobody, false, 't')).toEqual({ use: 'embedded' })
    expect(choosePostgres('auto', nobody, true, 't')).toEqual({ use: 'embedded' })
  })

  it('auto: a server that answers but refuses is an error when PG* was set by hand, and replaced when it was not', () => {
    expect(choosePostgres('auto', refused, true, '127.0.0.1:5432')).toMatchObject({
      use: 'error',
      message: expect.stringContaining('HARNESS_TEST_POSTGRES=embedded'),
    })
    expect(choosePostgres('auto', refused, false, 't')).toEqual({ use: 'embedded' })
  })

  it('external: never starts one, and says what to do when nothing answers', () => {
    expect(choosePostgres('external', { ok: true }, false, 't')).toEqual({ use: 'external' })
    expect(choosePostgres('external', nobody, true, '127.0.0.1:1')).toMatchObject({
      use: 'error',
      message: expect.stringContaining('127.0.0.1:1'),
    })
  })

  it('embedded: always our own, without asking the PG* settings', () => {
    expect(choosePostgres('embedded', undefined, true, 't')).toEqual({ use: 'embedded' })
  })

  it('refuses an unknown mode, naming the allowed ones', () => {
    expect(modeOf(undefined)).toBe('auto')
    expect(modeOf(' Embedded ')).toBe('embedded')
    expect(() => modeOf('docker')).toThrow(/auto, external, embedded/)
  })
})

describe('the global setup, end to end', () => {
  const saved = { ...process.env }
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name]
    Object.assign(process.env, saved)
  })

  it('with nothing at the PG* settings, starts a PostgreSQL 15 that the tests reach through PG*, and removes it after', async () => {
    delete process.env.HARNESS_TEST_POSTGRES_READY
    delete process.env.HARNESS_TEST_POSTGRES
    process.env.PGHOST = '127.0.0.1'
    process.env.PGPORT = String(await closedPort())
    const teardown = await setup()
    expect(teardown).toBeTypeOf('function')
    expect(process.env.HARNESS_TEST_POSTGRES_READY).toBe('embedded')
    const data = process.env.HARNESS_TEST_POSTGRES_DATA!
    expect(existsSync(data)).toBe(true)
    // What every test file and child process sees: the PG* variables.
    const client = new pg.Client({ connectionTimeoutMillis: 5_000 })
    await client.connect()
    const { rows } = await client.query<{ v: string; db: string }>(
      "SELECT current_setting('server_version_num') AS v, current_database() AS db",
    )
    await client.end()
    expect(Number(rows[0]!.v)).toBeGreaterThanOrEqual(150000)
    expect(Number(rows[0]!.v)).toBeLessThan(160000)
    expect(rows[0]!.db).toBe('test')

    // A second project's setup in the same run reuses it.
    expect(await setup()).toBeUndefined()

    // A server that answers but refuses, with PG* set by hand: an error that says what to do.
    const port = process.env.PGPORT
    delete process.env.HARNESS_TEST_POSTGRES_READY
    process.env.PGPASSWORD = 'not-the-password'
    await expect(setup()).rejects.toThrow(/refuses the tests.*HARNESS_TEST_POSTGRES=embedded/s)

    await teardown!()
    const after = new pg.Client({ host: '127.0.0.1', port: Number(port), connectionTimeoutMillis: 2_000 })
    await expect(after.connect()).rejects.toThrow()
    expect(existsSync(data)).toBe(false)
  })

  it('external mode with nothing at the PG* settings fails at once', async () => {
    delete process.env.HARNESS_TEST_POSTGRES_READY
    process.env.HARNESS_TEST_POSTGRES = 'external'
    process.env.PGHOST = '127.0.0.1'
    process.env.PGPORT = String(await closedPort())
    await expect(setup()).rejects.toThrow(/HARNESS_TEST_POSTGRES=external/)
  })
})

/** A loopback port that nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}
