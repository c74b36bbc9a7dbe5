#!/usr/bin/env node
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createHost, type HarnessStore } from '@tanstack/ai-harness'
import { startInspector } from './server.js'

const USAGE = `Usage: inspector [--store <url>] [--data-dir <dir>] [--port <n>] [--host <name>]

  --store      where the sessions are: pglite:<folder>, postgres://user@host:5432/db (or
               postgresql://; ?schema=<name> for another schema), memory: (an empty demo store).
               Default: the checkout app's PGlite data, <data-dir>/pglite.
  --data-dir   the checkout app's data folder (default .checkout-data, as \`pnpm checkout\` makes it)
  --port       default 4173
  --host       default 127.0.0.1 (this machine only)

The page's URL carries a random token after #: every API request must show it.
A PGlite folder can be open in one process at a time: stop the program that uses it first.`

async function openStore(url: string): Promise<{ store: HarnessStore; close(): Promise<void> }> {
  if (url.startsWith('pglite:')) {
    const [{ PGlite }, { postgresStore }] = await Promise.all([import('@electric-sql/pglite'), import('@tanstack/ai-harness-postgres')])
    const store = postgresStore({ client: new PGlite(resolve(url.slice('pglite:'.length))), closeClient: true })
    await store.migrate()
    return { store, close: () => store.close() }
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const [{ default: pg }, { postgresStore }] = await Promise.all([import('pg'), import('@tanstack/ai-harness-postgres')])
    const parsed = new URL(url)
    const schema = parsed.searchParams.get('schema') ?? undefined
    parsed.searchParams.delete('schema')
    const pool = new pg.Pool({ connectionString: parsed.toString(), max: 4 })
    pool.on('error', () => {})
    const store = postgresStore({ client: pool, closeClient: true, ...(schema ? { schema } : {}) })
    await store.migrate()
    return { store, close: () => store.close() }
  }
  if (url === 'memory:') {
    const { memoryStore } = await import('@tanstack/ai-harness-memory')
    return { store: memoryStore(), close: async () => {} }
  }
  throw new Error(`Unknown store ${JSON.stringify(url)}: use pglite:<folder>, postgres://… or memory:.`)
}

async function main(): Promise<number> {
  let values: { store?: string; 'data-dir'?: string; port?: string; host?: string; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args: process.argv.slice(2).filter((arg) => arg !== '--'),
      options: {
        store: { type: 'string' },
        'data-dir': { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (error) {
    process.stderr.write(`inspector: ${(error as Error).message}\n${USAGE}\n`)
    return 2
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  const port = Number(values.port ?? 4173)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`inspector: --port must be a port number, not ${values.port}\n`)
    return 2
  }
  const url = values.store ?? `pglite:${resolve(values['data-dir'] ?? '.checkout-data', 'pglite')}`
  let opened: Awaited<ReturnType<typeof openStore>>
  try {
    opened = await openStore(url)
  } catch (error) {
    process.stderr.write(`inspector: cannot open the store ${url}: ${(error as Error).message}\n`)
    return 3
  }
  // No harnesses: this host only reads, answers and cancels; the app's workers resume the sessions.
  const host = createHost({ store: opened.store, harnesses: [] })
  const inspector = await startInspector({ host, port, hostname: values.host ?? '127.0.0.1' })
  process.stdout.write(`inspector: ${inspector.url}\n`)
  await new Promise<void>((done) => {
    process.once('SIGINT', done)
    process.once('SIGTERM', done)
  })
  await inspector.close()
  await opened.close()
  return 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    process.stderr.write(`inspector: ${(error as Error)?.message ?? String(error)}\n`)
    process.exitCode = 1
  },
)
