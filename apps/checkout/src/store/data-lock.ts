import { CliError, ExitCode } from '../exit-codes.js'

/** A held lock on a data folder. */
export interface DataLock {
  release(): void
}

/**
 * Takes the data folder for this run, with the PostgreSQL package's folder lock (the one
 * `postgresStore` takes on a PGlite folder): two runs at once on one folder would mix
 * their ledgers and their PGlite. A lock whose process is gone is taken over. Imported
 * only when the PGlite store is chosen.
 */
export async function lockDataDir(dataDir: string): Promise<DataLock> {
  const { DataDirLockedError, lockDataDir: lock } = await import('@tanstack/ai-harness-postgres')
  try {
    return lock(dataDir)
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      throw new CliError(
        ExitCode.StoreUnreachable,
        `Another checkout process (pid ${error.pid}) is using ${error.dataDir}. Wait for it to finish, or pass another --data-dir.`,
        { cause: error },
      )
    }
    throw error
  }
}
