import { postgresStore } from '@tanstack/ai-harness-postgres'
import pg from 'pg'
import { type AppPostgres, appPostgres } from './postgres.js'
import { startProxy } from './proxy.js'
import { ServerProcess } from './servers.js'
import { Billing, type BillingCall } from './server/billing.js'

export interface AppOptions {
  /** The proxy's port; 0 for any free one. */
  port: number
  /** Schema of the store's tables and billing's ledger. Default `web`. */
  schema?: string
  /** A folder of gates (see server/pause.ts): no demo delays, holds only where armed. */
  gatesDir?: string
  /** Delay between the answer's words without gates; default 40 ms. */
  wordMs?: number
  log?: (line: string) => void
  /** Drop the schema when the app stops (the test, the screenshots): default false, `pnpm web` keeps its data. */
  dropSchema?: boolean
}

/** The running app: the proxy's URL, the two servers, the database. */
export interface App {
  readonly url: string
  readonly servers: readonly ServerProcess[]
  readonly postgres: AppPostgres
  readonly schema: string
  /** Billing's ledger, read from the database. */
  billing(): Promise<BillingCall[]>
  /** The session's log, read from the store. */
  records(sessionId: string): Promise<Array<{ type: string; [key: string]: unknown }>>
  stop(): Promise<void>
}

/** Starts the web app: PostgreSQL (found or embedded), the tables, two server processes, the proxy. */
export async function startApp(options: AppOptions): Promise<App> {
  const log = options.log ?? (() => {})
  const schema = options.schema ?? 'web'
  const postgres = await appPostgres()
  log(`web: PostgreSQL is ${postgres.description}`)
  const pool = new pg.Pool({ ...poolConfig(postgres), max: 2 })
  pool.on('error', () => {})
  const store = postgresStore({ client: pool, schema, liveness: false })
  await Billing.migrate(pool, schema)
  await store.migrate()
  const env = {
    ...process.env,
    ...postgres.env,
    WEB_SCHEMA: schema,
    WEB_GATES: options.gatesDir ?? '',
    WEB_WORD_MS: String(options.wordMs ?? 40),
  }
  const servers = ['a', 'b'].map((name) => new ServerProcess(name, env, log))
  await Promise.all(servers.map((s) => s.start()))
  const proxy = await startProxy(() => servers, options.port)
  const billing = new Billing(pool, schema)
  return {
    url: proxy.url,
    servers,
    postgres,
    schema,
    billing: () => billing.calls(),
    records: async (sessionId) => (await store.read(sessionId)).map((e) => e.record as { type: string }),
    async stop() {
      proxy.closeAllConnections()
      await new Promise((resolve) => proxy.close(resolve))
      await Promise.all(servers.map((s) => s.stop()))
      await store.close()
      if (options.dropSchema) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await pool.end()
      await postgres.stop()
    },
  }
}

function poolConfig(postgres: AppPostgres): pg.PoolConfig {
  const { PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD } = postgres.env
  return { host: PGHOST, port: Number(PGPORT), database: PGDATABASE, user: PGUSER, password: PGPASSWORD }
}
