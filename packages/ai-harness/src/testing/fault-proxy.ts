import { type AddressInfo, createServer, type Socket, connect } from 'node:net'

/**
 * What the proxy does to a request it matched.
 *
 * - `reset`: the request never reaches the server; both connections are reset (RST).
 * - `blackhole`: the request never reaches the server and nothing comes back; the
 *   connection stays open, so the client waits (a half-open connection).
 * - `cut-reply`: the request reaches the server (a write runs); the server's reply is
 *   dropped and the client's connection reset.
 * - `hang-reply`: the request reaches the server; its reply and everything after it on
 *   that connection are dropped, and the connection stays open: the client waits forever.
 * - `{ delayMs }`: the request is forwarded after a delay.
 */
export type ProxyAction = 'reset' | 'blackhole' | 'cut-reply' | 'hang-reply' | { readonly delayMs: number }

export interface ProxyRule {
  /**
   * Which request: bytes (or text) the client sends, looked for in what it sent on the
   * connection (also across packets), or a test of those bytes. Default: the next bytes
   * any client sends.
   */
  readonly when?: string | Uint8Array | ((sent: Buffer) => boolean)
  readonly action: ProxyAction
  /** How many requests it hits. Default 1; `Infinity` for all. */
  readonly times?: number
}

export interface ProxyRuleHandle {
  readonly hits: number
  /** Resolves when the rule first hits. */
  readonly hit: Promise<void>
  remove(): void
}

/**
 * A TCP proxy on loopback between a store client and its server, for fault tests: it
 * resets, blackholes, delays and cuts replies after the request reached the server,
 * per matched request or for every connection at once.
 */
export interface FaultProxy {
  readonly host: string
  readonly port: number
  /** `host:port`, for connection strings. */
  readonly address: string
  rule(rule: ProxyRule): ProxyRuleHandle
  /** A partition: every connection, open or new, gets nothing through either way until `heal()`. */
  blackholeAll(): void
  /** Resets every open connection now. */
  resetAll(): void
  /**
   * Removes every rule and ends a partition. A connection that lost bytes can never be in
   * step again, so it is reset: its client reconnects, as it would after a real partition.
   */
  heal(): void
  /** Connections open now. */
  readonly connections: number
  close(): Promise<void>
}

interface Pair {
  readonly client: Socket
  readonly server: Socket
  /** Recent client bytes, to find a pattern that spans packets. */
  window: Buffer
  /** Drop both ways, keep the sockets open. */
  dead: boolean
  /** Some bytes were dropped: the protocol on this connection is out of step. */
  dropped: boolean
  /** Drop what the server sends. */
  muted: boolean
  /** Reset the client at the server's next bytes. */
  cutNextReply: boolean
  /** Forwarding order when a rule delays. */
  queue: Promise<void>
  /** Requests waiting in `queue`: later ones wait behind them. */
  delayed: number
}

interface ActiveRule {
  readonly rule: ProxyRule
  left: number
  hits: number
  onHit: () => void
}

const WINDOW_BYTES = 4096

export async function startFaultProxy(options: { target: { host?: string; port: number }; host?: string }): Promise<FaultProxy> {
  const targetHost = options.target.host ?? '127.0.0.1'
  const rules: ActiveRule[] = []
  const pairs = new Set<Pair>()
  let partitioned = false

  const destroy = (pair: Pair, reset: boolean) => {
    if (reset && !pair.client.destroyed) pair.client.resetAndDestroy()
    else pair.client.destroy()
    if (reset && !pair.server.destroyed) pair.server.resetAndDestroy()
    else pair.server.destroy()
    pairs.delete(pair)
  }

  const ruleFor = (sent: Buffer): ActiveRule | undefined => {
    for (const active of rules) {
      if (active.left <= 0) continue
      const { when } = active.rule
      const hit =
        when === undefined
          ? true
          : typeof when === 'function'
            ? when(sent)
            : sent.includes(typeof when === 'string' ? Buffer.from(when) : Buffer.from(when))
      if (!hit) continue
      active.left--
      active.hits++
      active.onHit()
      return active
    }
    return undefined
  }

  const server = createServer((client) => {
    const upstream = connect({ host: targetHost, port: options.target.port })
    const pair: Pair = {
      client,
      server: upstream,
      window: Buffer.alloc(0),
      dead: false,
      dropped: false,
      muted: false,
      cutNextReply: false,
      queue: Promise.resolve(),
      delayed: 0,
    }
    pairs.add(pair)
    client.on('error', () => destroy(pair, false))
    upstream.on('error', () => destroy(pair, false))
    client.on('close', () => destroy(pair, false))
    upstream.on('close', () => destroy(pair, false))
    client.on('data', (chunk: Buffer) => {
      if (partitioned || pair.dead) {
        pair.dropped = true
        return
      }
      const seen = Buffer.concat([pair.window, chunk])
      pair.window = seen.subarray(Math.max(0, seen.length - WINDOW_BYTES))
      const action = ruleFor(seen)?.rule.action
      if (action !== undefined) pair.window = Buffer.alloc(0)
      if (action === 'reset') return destroy(pair, true)
      if (action === 'blackhole') {
        pair.dead = true
        pair.dropped = true
        return
      }
      if (action === 'cut-reply') pair.cutNextReply = true
      if (action === 'hang-reply') pair.muted = true
      const delayMs = typeof action === 'object' ? action.delayMs : 0
      if (delayMs === 0 && pair.delayed === 0) {
        // At once, so a fault that follows this request (a partition on its hit) cannot overtake it.
        upstream.write(chunk)
        return
      }
      pair.delayed++
      pair.queue = pair.queue.then(async () => {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
        pair.delayed--
        if (!upstream.destroyed && !pair.dead && !partitioned) upstream.write(chunk)
        else pair.dropped = true
      })
    })
    upstream.on('data', (chunk: Buffer) => {
      if (partitioned || pair.dead || pair.muted) {
        pair.dropped = true
        return
      }
      if (pair.cutNextReply) return destroy(pair, true)
      client.write(chunk)
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, options.host ?? '127.0.0.1', () => resolve())
  })
  const { address, port } = server.address() as AddressInfo

  return {
    host: address,
    port,
    address: `${address}:${port}`,
    rule(rule) {
      let onHit = () => {}
      const hit = new Promise<void>((resolve) => {
        onHit = resolve
      })
      const active: ActiveRule = { rule, left: rule.times ?? 1, hits: 0, onHit: () => onHit() }
      rules.push(active)
      return {
        get hits() {
          return active.hits
        },
        hit,
        remove() {
          active.left = 0
        },
      }
    },
    blackholeAll() {
      partitioned = true
    },
    resetAll() {
      for (const pair of [...pairs]) destroy(pair, true)
    },
    heal() {
      for (const active of rules) active.left = 0
      partitioned = false
      for (const pair of [...pairs]) if (pair.dropped) destroy(pair, true)
    },
    get connections() {
      return pairs.size
    },
    async close() {
      for (const pair of [...pairs]) destroy(pair, true)
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
