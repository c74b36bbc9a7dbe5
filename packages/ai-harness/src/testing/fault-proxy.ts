import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { FaultRules } from './fault-rules.js'

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

const WINDOW_BYTES = 4096

/** Whether the bytes a client sent match a rule's `when`. */
const sentMatches = (when: ProxyRule['when']) => (sent: Buffer) => {
  if (when === undefined) return true
  if (typeof when === 'function') return when(sent)
  return sent.includes(typeof when === 'string' ? Buffer.from(when) : Buffer.from(when))
}

/** The state the proxy shares with every connection. */
interface ProxyState {
  readonly rules: FaultRules<ProxyRule, Buffer>
  readonly links: Set<Link>
  partitioned: boolean
}

/** One client connection and its connection to the server. */
class Link {
  /** Recent client bytes, to find a pattern that spans packets. */
  #window = Buffer.alloc(0)
  /** Drop both ways, keep the sockets open. */
  #dead = false
  /** Some bytes were dropped: the protocol on this connection is out of step. */
  dropped = false
  /** Drop what the server sends. */
  #muted = false
  /** Reset the client at the server's next bytes. */
  #cutNextReply = false
  /** Forwarding order when a rule delays; requests waiting in it. */
  #queue: Promise<void> = Promise.resolve()
  #delayed = 0

  constructor(
    private readonly client: Socket,
    private readonly server: Socket,
    private readonly proxy: ProxyState,
  ) {
    proxy.links.add(this)
    for (const socket of [client, server]) {
      socket.on('error', () => this.destroy(false))
      socket.on('close', () => this.destroy(false))
    }
    client.on('data', (chunk: Buffer) => this.#fromClient(chunk))
    server.on('data', (chunk: Buffer) => this.#fromServer(chunk))
  }

  destroy(reset: boolean): void {
    for (const socket of [this.client, this.server]) {
      if (reset && !socket.destroyed) socket.resetAndDestroy()
      else socket.destroy()
    }
    this.proxy.links.delete(this)
  }

  #fromClient(chunk: Buffer): void {
    if (this.proxy.partitioned || this.#dead) {
      this.dropped = true
      return
    }
    const seen = Buffer.concat([this.#window, chunk])
    this.#window = seen.subarray(Math.max(0, seen.length - WINDOW_BYTES))
    const action = this.proxy.rules.take(seen)?.action
    if (action !== undefined) this.#window = Buffer.alloc(0)
    if (action === 'reset') {
      this.destroy(true)
      return
    }
    if (action === 'blackhole') {
      this.#dead = true
      this.dropped = true
      return
    }
    if (action === 'cut-reply') this.#cutNextReply = true
    if (action === 'hang-reply') this.#muted = true
    const delayMs = typeof action === 'object' ? action.delayMs : 0
    if (delayMs === 0 && this.#delayed === 0) {
      // At once, so a fault that follows this request (a partition on its hit) cannot overtake it.
      this.server.write(chunk)
      return
    }
    this.#delayed++
    this.#queue = this.#queue.then(async () => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
      this.#delayed--
      if (!this.server.destroyed && !this.#dead && !this.proxy.partitioned) this.server.write(chunk)
      else this.dropped = true
    })
  }

  #fromServer(chunk: Buffer): void {
    if (this.proxy.partitioned || this.#dead || this.#muted) {
      this.dropped = true
      return
    }
    if (this.#cutNextReply) this.destroy(true)
    else this.client.write(chunk)
  }
}

export async function startFaultProxy(options: { target: { host?: string; port: number }; host?: string }): Promise<FaultProxy> {
  const targetHost = options.target.host ?? '127.0.0.1'
  const state: ProxyState = { rules: new FaultRules(), links: new Set(), partitioned: false }
  const server = createServer((client) => new Link(client, connect({ host: targetHost, port: options.target.port }), state))
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
      const handle = state.rules.add(rule, sentMatches(rule.when), rule)
      return {
        get hits() {
          return handle.hits
        },
        hit: handle.hit.then(() => {}),
        remove: () => handle.remove(),
      }
    },
    blackholeAll() {
      state.partitioned = true
    },
    resetAll() {
      for (const link of [...state.links]) link.destroy(true)
    },
    heal() {
      state.rules.clear()
      state.partitioned = false
      for (const link of [...state.links]) if (link.dropped) link.destroy(true)
    },
    get connections() {
      return state.links.size
    },
    async close() {
      for (const link of [...state.links]) link.destroy(true)
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
