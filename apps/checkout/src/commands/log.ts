import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import type { LogEntry } from '@tanstack/ai-harness/store'
import { CliError, ExitCode, usageError } from '../exit-codes.js'
import { formatTimeline } from '../report/timeline.js'
import { lockDataDir } from '../store/data-lock.js'
import { describeStore, type StoreFlags, storeConfigFrom } from '../store/store-config.js'
import { readSession } from './read-session.js'

/** The flags of `log`. */
export interface LogFlags extends StoreFlags {
  json?: boolean
}

/** `log <sessionId>`: prints a session's log as a timeline, or its raw records with `--json`. */
export async function logCommand(sessionId: string, flags: LogFlags): Promise<number> {
  const store = storeConfigFrom(flags, process.env)
  if (store.kind === 'memory') {
    throw usageError(
      'The memory store keeps nothing after its process ends, so there is no log to print. Use the store the run used, e.g. --store pglite.',
    )
  }
  // Opening a PGlite folder that no run made would create a database just to say "not found".
  if (store.kind === 'pglite' && !existsSync(store.path)) {
    throw new CliError(ExitCode.NotFound, `No session ${JSON.stringify(sessionId)}: no run has used ${store.path} yet.`)
  }
  const lock = store.kind === 'pglite' ? await lockDataDir(resolve(flags.dataDir)) : undefined
  let entries: LogEntry[]
  try {
    entries = await readSession(store, sessionId)
  } finally {
    lock?.release()
  }
  if (entries.length === 0)
    throw new CliError(ExitCode.NotFound, `No session ${JSON.stringify(sessionId)} in the store (${describeStore(store)}).`)
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ sessionId, store: { kind: store.kind, description: describeStore(store) }, entries }, null, 2)}\n`,
    )
  } else {
    process.stdout.write(
      [`Session ${sessionId}: ${entries.length} records (${describeStore(store)})`, ...formatTimeline(entries), ''].join('\n'),
    )
  }
  return ExitCode.Ok
}
