import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CliError, ExitCode } from '../exit-codes.js'

/** A held lock on a data folder. */
export interface DataLock {
  release(): void
}

/**
 * Takes the data folder for this process. PGlite is one process's database: two
 * processes that open one folder at once corrupt it. The lock file holds the owner's
 * pid; a lock whose owner is gone (killed, crashed) is taken over.
 */
export function lockDataDir(dataDir: string): DataLock {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, 'checkout.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' })
      return { release: () => rmSync(path, { force: true }) }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = Number(readFileSync(path, 'utf8'))
      if (isAlive(owner)) {
        throw new CliError(
          ExitCode.StoreUnreachable,
          `Another checkout process (pid ${owner}) is using ${dataDir}. Wait for it to finish, or pass another --data-dir.`,
        )
      }
      rmSync(path, { force: true })
    }
  }
  throw new CliError(ExitCode.StoreUnreachable, `Could not lock ${dataDir}: another process keeps taking it.`)
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
