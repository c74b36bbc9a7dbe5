/**
 * The exclusive lock on a PGlite data folder, for the life of the process that opened it.
 * PGlite is one process's database: two processes on one folder corrupt it. The lock is a
 * file in the folder holding the owner's pid; a lock whose pid is gone (killed, crashed)
 * is taken over. Holding it is also what lets the store prove a lease's holder dead: no
 * other process can have the folder open, so every holder that is not a live store
 * instance of this process is gone.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { HarnessError } from '@tanstack/ai-harness/store'

/** The lock file's name inside the data folder. */
export const DATA_DIR_LOCK_FILE = 'harness-store.lock'

/** A second process opened a PGlite data folder that a live process holds. */
export class DataDirLockedError extends HarnessError {
  constructor(
    /** The folder, as an absolute path. */
    readonly dataDir: string,
    /** The pid of the process that holds it. */
    readonly pid: number,
  ) {
    super(
      'STORE_LOCKED',
      `The PGlite data folder ${dataDir} is in use by process ${pid}: PGlite is one process's database, and a second opener would corrupt it. ` +
        'Stop that process (its leases are taken over at once when the next one opens the folder), or use another folder; to share one database between processes, use PostgreSQL.',
    )
    this.name = 'DataDirLockedError'
  }
}

/** A held lock on a data folder; `release()` frees it once every holder in the process let go. */
export interface DataDirLock {
  readonly dataDir: string
  release(): void
}

/** Folders this process holds, with how many holders each (the app and its stores may each take it). */
const held = new Map<string, number>()

/**
 * Takes the data folder for this process, or joins this process's hold on it. Throws
 * `STORE_LOCKED` ({@link DataDirLockedError}, naming the folder and the pid) while another
 * live process holds it. Take it before `new PGlite(dataDir)` when you can: `postgresStore`
 * takes it too, but only after PGlite has started to open the folder.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir)
  const count = held.get(dir)
  if (count === undefined) takeFile(dir)
  held.set(dir, (count ?? 0) + 1)
  let released = false
  return {
    dataDir: dir,
    release() {
      if (released) return
      released = true
      const left = (held.get(dir) ?? 1) - 1
      if (left > 0) return void held.set(dir, left)
      held.delete(dir)
      rmSync(join(dir, DATA_DIR_LOCK_FILE), { force: true })
    },
  }
}

/**
 * The folder of a PGlite instance that lives on the file system, or undefined for one in
 * memory or in a browser's storage (`memory://`, `idb://`, `opfs-ahp://`), which no other
 * process can open.
 */
export function fileDataDirOf(dataDir: string | undefined): string | undefined {
  if (dataDir === undefined || dataDir === '') return undefined
  if (dataDir.startsWith('file://')) return dataDir.slice('file://'.length)
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(dataDir) ? undefined : dataDir
}

function takeFile(dir: string): void {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, DATA_DIR_LOCK_FILE)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const owner = pidIn(path)
    // Our own pid: a lock left by this process (a store not closed); the folder is ours.
    if (owner === process.pid) return
    if (owner !== undefined && isAlive(owner)) throw new DataDirLockedError(dir, owner)
    rmSync(path, { force: true })
  }
  throw new HarnessError(
    'STORE_LOCKED',
    `Could not lock the PGlite data folder ${dir}: other processes keep taking it. Open it from one process.`,
  )
}

/** The pid in a lock file; undefined when it is gone or half written (its writer died between the create and the write). */
function pidIn(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8'))
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
