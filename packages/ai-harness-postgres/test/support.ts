import type { PoolConfig } from 'pg'

/** Connection settings from the PG* variables, defaulting to the local PostgreSQL 15 of these machines. */
export function pgConfig(): PoolConfig {
  return {
    host: process.env.PGHOST ?? '127.0.0.1',
    port: Number(process.env.PGPORT ?? 5432),
    database: process.env.PGDATABASE ?? 'test',
    user: process.env.PGUSER ?? 'postgres',
    password: process.env.PGPASSWORD,
  }
}

/** A schema of its own for each namespace, so runs share a database and never touch each other. */
export function schemaFor(namespace: string): string {
  // The namespace starts with a random part, so cutting at 63 bytes keeps it unique.
  // Case kept: schema names are quoted, and namespaces that differ only in case must stay apart.
  return `h_${namespace.replace(/[^A-Za-z0-9_]/g, '_')}`.slice(0, 63)
}

/** A fresh schema name for a test of this package. */
export function freshSchema(label: string): string {
  return schemaFor(`${Math.random().toString(36).slice(2, 10)}_${label}`)
}
