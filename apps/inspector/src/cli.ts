#!/usr/bin/env node
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createHost, type Harness } from '@tanstack/ai-harness'
import { loadHarnesses } from './load-harnesses.js'
import { openStore } from './open-store.js'
import { startInspector } from './server.js'

const USAGE = `Usage: harness-inspector [--store <url>] [--harnesses <module>] [--data-dir <dir>] [--port <n>] [--host <name>]

  --store      where the sessions are: pglite:<folder>, postgres://user@host:5432/db (or
               postgresql://; ?schema=<name> for another schema), memory: (an empty demo store).
               Default: the checkout app's PGlite data, <data-dir>/pglite. Opened read-only in
               what it creates: a missing schema or missing tables are an error, never created.
  --harnesses  a module that exports your app's harnesses (export const harnesses = [...]), so
               answers and approvals are checked by your app's rules (its secrets). Without it
               the inspector reads and cancels, and refuses answers it cannot check.
  --data-dir   the checkout app's data folder (default .checkout-data, as \`pnpm checkout\` makes it)
  --port       default 4173
  --host       default 127.0.0.1 (this machine only)

The page's URL carries a random token after #: every API request must show it.
A PGlite folder can be open in one process at a time: stop the program that uses it first.`

async function main(): Promise<number> {
  let values: { store?: string; harnesses?: string; 'data-dir'?: string; port?: string; host?: string; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args: process.argv.slice(2).filter((arg) => arg !== '--'),
      options: {
        store: { type: 'string' },
        harnesses: { type: 'string' },
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
  let harnesses: Harness[] = []
  try {
    if (values.harnesses) harnesses = await loadHarnesses(values.harnesses)
  } catch (error) {
    process.stderr.write(`inspector: cannot load --harnesses ${values.harnesses}: ${(error as Error).message}\n`)
    return 2
  }
  let opened: Awaited<ReturnType<typeof openStore>>
  try {
    opened = await openStore(url)
  } catch (error) {
    process.stderr.write(`inspector: cannot open the store ${url}: ${(error as Error).message}\n`)
    return 3
  }
  // The app's workers resume the sessions. Without the app's harnesses this host cannot check
  // its secret rules, so it refuses answers (CAPABILITY_MISSING) rather than log them unchecked.
  const host = createHost({ store: opened.store, harnesses })
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
