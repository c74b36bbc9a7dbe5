import type { AddressInfo } from 'node:net'
import { createServer, connect, type Socket } from 'node:net'

/**
 * What the proxy does to traffic, switchable at any time (also on open connections):
 *
 * - `pass`: forwards both ways.
 * - `blackhole`: keeps every connection open and drops every byte both ways, as a
 *   half-open connection or a dead route does: the client waits for an answer that
 *   never comes.
 * - `drop-replies`: forwards requests (they reach the server and take effect) but drops
 *   the answers: a write whose outcome the client cannot know.
 * - `reset`: answers every byte a client sends with a TCP reset (`ECONNRESET`).
 */
export type ProxyMode = 'pass' | 'blackhole' | 'drop-replies' | 'reset'

export interface TcpProxy {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string
  mode: ProxyMode
  /** Client connections accepted so far. */
  readonly connections: number
  close(): Promise<void>
}

/** A loopback TCP proxy in front of `target` (`http://host:port`), for fault tests. */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target)
  const sockets = new Set<Socket>()
  let mode: ProxyMode = 'pass'
  let connections = 0
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
  }
  const server = createServer((client) => {
    connections++
    track(client)
    const upstream = connect(Number(port), hostname)
    track(upstream)
    client.on('data', (chunk) => {
      if (mode === 'reset') {
        client.resetAndDestroy()
        upstream.destroy()
      } else if (mode !== 'blackhole') upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      if (mode === 'pass') client.write(chunk)
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const address = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    get mode() {
      return mode
    },
    set mode(next) {
      mode = next
    },
    get connections() {
      return connections
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
