/**
 * Wakeup notifications (`wakeups.watch`): a schedule that makes a wakeup due at once sends
 * `NOTIFY` on the store's channel in the same statement, and a watcher `LISTEN`s on it: on
 * pg on a connection of its own beside the pool (a pooled connection would hand LISTEN back
 * to the pool), on PGlite through its `listen`. The server delivers a notification when
 * the schedule commits, to every process listening on that database.
 */
import { createHash } from 'node:crypto'
import type { PgPoolLike, PGliteLike, PostgresClient } from './driver-types.js'
import { isPGlite, isPool } from './driver-types.js'

/** The channel of one store's tables: a hash of schema and prefix, so it is a short plain identifier. */
export function wakeupChannel(schema: string, prefix: string): string {
  return `harness_due_${createHash('sha256').update(`${schema}\0${prefix}`).digest('hex').slice(0, 24)}`
}

/** Listens on `channel` until the returned function is called. */
export type Listen = (channel: string, listener: () => void) => Promise<() => Promise<void>>

export function listenerFor(client: PostgresClient): Listen | undefined {
  if (isPGlite(client)) return pgliteListen(client)
  // The app's single client: no notifications (a LISTEN there would be shared by every watch on it); polls find the wakeups.
  return isPool(client) ? poolListen(client) : undefined
}

function pgliteListen(client: PGliteLike): Listen | undefined {
  const db = client as PGliteLike & { listen?: (channel: string, callback: () => void) => Promise<() => Promise<void>> }
  if (typeof db.listen !== 'function') return undefined
  return (channel, listener) => db.listen!(channel, () => listener())
}

interface NotifyingClient {
  connect?(): Promise<void>
  query(text: string): Promise<unknown>
  end?(): Promise<void>
  on(event: 'notification', listener: (message: { channel: string }) => void): unknown
  removeListener(event: 'notification', listener: (message: { channel: string }) => void): unknown
  connection?: { stream?: { unref?(): void } }
}

/** On a pool: one client of the pool's class and options per watch, ended when the watch stops. */
function poolListen(client: PgPoolLike): Listen | undefined {
  const pool = client as PgPoolLike & { Client?: new (options: unknown) => NotifyingClient; options?: unknown }
  if (typeof pool.Client !== 'function') return undefined
  return async (channel, listener) => {
    const own = new pool.Client!(pool.options)
    // A lost connection only loses notifications: the worker's polls still find the wakeups.
    ;(own as unknown as { on(event: 'error', listener: () => void): unknown }).on('error', () => {})
    await own.connect?.()
    // Listening must not keep the process alive.
    own.connection?.stream?.unref?.()
    own.on('notification', (message) => {
      if (message.channel === channel) listener()
    })
    await own.query(`LISTEN "${channel}"`)
    return async () => {
      await own.end?.().catch(() => {})
    }
  }
}
