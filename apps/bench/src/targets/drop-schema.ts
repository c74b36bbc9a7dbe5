import pg from 'pg'
import { pgConfig } from './pg-config.js'

/** Drops one schema this run created, on a connection of its own (a peer may have ended its pool). */
export async function dropSchema(schema: string): Promise<void> {
  if (!/^bench_[a-z0-9_]+$/.test(schema)) throw new Error(`refusing to drop ${schema}: not a bench schema`)
  const client = new pg.Client(pgConfig())
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await client.end()
  }
}
