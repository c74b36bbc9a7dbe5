/**
 * Liveness: how a store instance (a holder) proves to every other instance that it is
 * alive, so that a lease whose holder is dead can be taken at once instead of at expiry.
 *
 * - On pg, the holder keeps a session-level advisory lock, key = its holder id, on a
 *   connection of its own (outside the pool). The server frees the lock the moment that
 *   connection ends: the process died (the kernel closes its sockets), the connection was
 *   cut, or the server gave up on a silent one (the keepalives set below). A heartbeat on
 *   the connection finds a connection that stopped answering; the holder then counts
 *   itself dead first (its leases refuse to renew or append, `LEASE_LOST`) and drops it.
 * - On PGlite, the process holds the data folder (`data-dir-lock.ts`), so the live
 *   holders are exactly the open store instances of this process.
 *
 * Why a holder wrongly thought dead (partitioned, paused) still writes nothing: a
 * takeover replaces the lease row with a greater fence, in one statement that waits for
 * the row lock each fenced append takes (FOR SHARE). An append that got the row lock
 * first lands before the takeover, and the new holder reads the log after it; an append
 * after it finds another fence and writes nothing. Renew and release compare the fence
 * too. So the log has one writer at a time whatever the holder believes; what liveness
 * changes is only how soon the next writer may start.
 */
import { randomInt } from 'node:crypto'
import type { NamedQuery, PgClientLike, PgPoolLike, PostgresClient, QueryResultLike } from './driver-types.js'
import { isPGlite, isPool } from './driver-types.js'
import { LIVENESS_LOCK_CLASS, type LivenessKind } from './sql.js'

/** How often the liveness connection is asked whether it still answers, and how long it may take. */
export const HEARTBEAT_MS = 1_000
export const HEARTBEAT_TIMEOUT_MS = 5_000
/**
 * Server-side keepalives of the liveness connection: a connection that goes silent (a
 * partition) is dropped by the server after about idle + interval × count seconds, which
 * frees the lock; `tcp_user_timeout` bounds unacknowledged writes the same way.
 */
const KEEPALIVE_SETTINGS = [
  'SET tcp_keepalives_idle = 2',
  'SET tcp_keepalives_interval = 1',
  'SET tcp_keepalives_count = 3',
  'SET tcp_user_timeout = 5000',
]

export interface Liveness {
  readonly kind: LivenessKind
  /** The holder id to record with a lease taken now; null when this instance cannot prove it is alive (then expiry only). */
  holder(): Promise<number | null>
  /** The live holders of the database, for `list` liveness. */
  live(): number[]
  /** Notes a lease this instance took under `holder`: if that holder is already gone, the lease counts as lost. */
  took(fence: number, holder: number | null): void
  /** Whether a lease of this instance with this fence was taken by a holder that has died since. */
  lost(fence: number): boolean
  /** Ends the holder: its leases become orphans that another instance takes at once. */
  close(): Promise<void>
}

/**
 * The liveness of one store instance on `client`; `enabled: false` records no holder and
 * proves nobody dead. On pg the store instances of one pool or client share one holder
 * (one liveness connection per pool, not per store object: a process that makes many
 * store objects on its pool opens one connection), which ends when the last of them closes.
 * `timeoutMs` bounds how long an acquire waits for the liveness connection: past it, that
 * lease is taken without a holder (it ends by expiry), and the next one tries again.
 */
export function createLiveness(client: PostgresClient, enabled: boolean, timeoutMs: number): Liveness {
  if (!enabled) return noLiveness(isPGlite(client) ? 'none' : 'locks')
  if (isPGlite(client)) return listLiveness()
  return sharedLockLiveness(client, timeoutMs)
}

/** The pools and clients with a liveness connection, and how many open store instances use each. */
const sharedOn = new WeakMap<object, { liveness: Liveness; users: number }>()

function sharedLockLiveness(client: PgPoolLike | PgClientLike, timeoutMs: number): Liveness {
  const entry = sharedOn.get(client) ?? { liveness: lockLiveness(client, timeoutMs), users: 0 }
  sharedOn.set(client, entry)
  entry.users++
  let closed = false
  return {
    kind: 'locks',
    holder: () => (closed ? Promise.resolve(null) : entry.liveness.holder()),
    live: () => [],
    took: (fence, holder) => entry.liveness.took(fence, holder),
    lost: (fence) => entry.liveness.lost(fence),
    async close() {
      if (closed) return
      closed = true
      if (--entry.users > 0) return
      sharedOn.delete(client)
      await entry.liveness.close()
    },
  }
}

function noLiveness(kind: LivenessKind): Liveness {
  return { kind, holder: async () => null, live: () => [], took() {}, lost: () => false, close: async () => {} }
}

/** Fences of the leases this instance took, against the holder that took them. */
class Taken {
  /** Every lease of this instance with a fence up to this one belongs to a dead holder. */
  #deadUpTo = 0
  #greatest = 0
  took(fence: number, alive: boolean): void {
    if (!alive) this.#deadUpTo = Math.max(this.#deadUpTo, fence)
    else this.#greatest = Math.max(this.#greatest, fence)
  }
  /** The holder died: every lease it took is gone. */
  died(): void {
    this.#deadUpTo = Math.max(this.#deadUpTo, this.#greatest)
  }
  lost(fence: number): boolean {
    return fence <= this.#deadUpTo
  }
}

/**
 * The open PGlite store instances of this process, on any database: one set for the
 * process (also across two copies of this package, and across wrappers of one PGlite
 * instance), since a PGlite database is reachable from this process only.
 */
const LIVE_KEY = Symbol.for('@tanstack/ai-harness-postgres/pglite-holders')
const processHolders = (): Set<number> => {
  const scope = globalThis as { [LIVE_KEY]?: Set<number> }
  scope[LIVE_KEY] ??= new Set()
  return scope[LIVE_KEY]
}

function listLiveness(): Liveness {
  const live = processHolders()
  let id = randomHolderId()
  while (live.has(id)) id = randomHolderId()
  live.add(id)
  const taken = new Taken()
  let closed = false
  return {
    kind: 'list',
    holder: async () => (closed ? null : id),
    live: () => [...live],
    took: (fence, holder) => taken.took(fence, holder === id && !closed),
    lost: (fence) => taken.lost(fence),
    async close() {
      closed = true
      live.delete(id)
      taken.died()
    },
  }
}

/** A connection the liveness lock lives on: the app's single client, or one of our own beside the pool. */
interface LockConnection {
  query(query: string | NamedQuery, values?: unknown[]): Promise<QueryResultLike>
  /** Ends it; for our own connection, also when the socket no longer answers. */
  end(): Promise<void>
  onLost(listener: () => void): void
}

// long: one state machine (connect, lock, heartbeat, loss, close), read best in one piece
function lockLiveness(client: PgPoolLike | PgClientLike, timeoutMs: number): Liveness {
  const taken = new Taken()
  let current: Promise<{ id: number; connection: LockConnection } | null> | undefined
  let id: number | null = null
  let heartbeat: NodeJS.Timeout | undefined
  let closed = false

  /** The connection whose lock proves this instance alive now. */
  let active: LockConnection | undefined

  const lose = (connection: LockConnection) => {
    connection.end().catch(() => {})
    if (connection !== active) return // an earlier connection, already given up
    active = undefined
    if (heartbeat) clearInterval(heartbeat)
    heartbeat = undefined
    if (id !== null) taken.died()
    id = null
    current = undefined
  }

  async function start(): Promise<{ id: number; connection: LockConnection } | null> {
    const connection = await openConnection(client)
    let lost = false
    connection.onLost(() => {
      lost = true
      lose(connection)
    })
    // Only on our own connection: the app's single client keeps its settings, and its loss shows in every query.
    const own = isPool(client)
    if (own) for (const setting of KEEPALIVE_SETTINGS) await connection.query(setting).catch(() => {})
    for (let attempt = 0; attempt < 5 && !lost; attempt++) {
      const key = randomHolderId()
      const { rows } = await connection.query('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', [LIVENESS_LOCK_CLASS, key])
      if (rows[0]?.ok !== true) continue // another live holder has this id: draw again
      id = key
      active = connection
      if (own) {
        heartbeat = setInterval(() => {
          connection.query({ text: 'SELECT 1', query_timeout: HEARTBEAT_TIMEOUT_MS }).catch(() => lose(connection))
        }, HEARTBEAT_MS)
        heartbeat.unref()
      }
      return { id: key, connection }
    }
    await connection.end().catch(() => {})
    return null
  }

  return {
    kind: 'locks',
    async holder() {
      if (closed) return null
      current ??= start().catch(() => {
        current = undefined // the next lease tries again; this one ends by expiry only
        return null
      })
      const starting = current
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), timeoutMs)
        timer.unref()
      })
      const held = await Promise.race([starting, late])
      clearTimeout(timer)
      return held?.id ?? null
    },
    live: () => [],
    took: (fence, holder) => taken.took(fence, holder !== null && holder === id),
    lost: (fence) => taken.lost(fence),
    async close() {
      closed = true
      const held = await current?.catch(() => null)
      if (!held) return
      if (heartbeat) clearInterval(heartbeat)
      heartbeat = undefined
      taken.died()
      id = null
      active = undefined
      current = undefined
      // The app's own client stays open: give the lock back on it. Our connection just ends.
      if (!isPool(client)) await held.connection.query('SELECT pg_advisory_unlock($1::int, $2::int)', [LIVENESS_LOCK_CLASS, held.id])
      else await held.connection.end()
    },
  }
}

/**
 * On a pool: a client of the pool's own class and configuration, outside the pool, so
 * the lock takes no pooled connection and lives exactly as long as its socket. On a
 * single client: that client (it is one session already).
 */
async function openConnection(client: PgPoolLike | PgClientLike): Promise<LockConnection> {
  if (!isPool(client)) return { query: (q, v) => client.query(q, v), end: async () => {}, onLost: () => {} }
  const pool = client as PgPoolLike & { Client?: new (options: unknown) => PgOwnClient; options?: unknown }
  if (typeof pool.Client !== 'function') throw new Error('the pool has no Client class to open a liveness connection with')
  const own = new pool.Client(pool.options)
  const listeners: Array<() => void> = []
  const fire = () => {
    for (const listener of listeners.splice(0)) listener()
  }
  own.on('error', fire)
  own.on('end', fire)
  await own.connect()
  // It proves this process alive; it must not keep it alive: an app that ends its pool (without
  // closing the store) still exits, and the server frees the lock as the socket goes.
  own.connection?.stream?.unref?.()
  return {
    query: (q, v) => own.query(q, v),
    async end() {
      // A silent socket would never finish an orderly end: drop it, which the server sees too when it can.
      own.connection?.stream?.destroy?.()
      await own.end().catch(() => {})
    },
    onLost: (listener) => listeners.push(listener),
  }
}

/** The parts of pg's Client that the liveness connection uses. */
interface PgOwnClient {
  connect(): Promise<void>
  query(query: string | NamedQuery, values?: unknown[]): Promise<QueryResultLike>
  end(): Promise<void>
  on(event: 'error' | 'end', listener: () => void): unknown
  connection?: { stream?: { destroy?(): void; unref?(): void } }
}

/** A positive int4: the advisory lock key, shown in pg_locks as objid. */
const randomHolderId = () => randomInt(1, 2 ** 31 - 1)
