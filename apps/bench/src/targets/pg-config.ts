import type { PoolConfig } from 'pg'

/** The local PostgreSQL 15 (trust auth, database `test`), overridable with the PG* variables. */
export function pgConfig(): PoolConfig {
  return {
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    database: process.env.PGDATABASE ?? 'test',
    user: process.env.PGUSER ?? 'postgres',
    password: process.env.PGPASSWORD,
  }
}

/** The same settings as a URL, for libraries that take one (DBOS). */
export function pgUrl(): string {
  const c = pgConfig()
  const auth = c.password ? `${encodeURIComponent(c.user!)}:${encodeURIComponent(String(c.password))}` : encodeURIComponent(c.user!)
  return `postgresql://${auth}@${c.host}:${c.port}/${c.database}`
}
