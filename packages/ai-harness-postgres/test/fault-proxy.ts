import { createServer, Socket } from 'node:net'

/**
 * What the proxy does with the bytes of every connection, open or new:
 * - `pass`: forwards both ways;
 * - `blackhole`: accepts and forwards nothing, either way (a half-open connection: the
 *   server is gone and nobody says so);
 * - `drop-replies`: forwards to the server, drops its replies (a statement runs, its
 *   answer is lost).
 */
export type ProxyMode = 'pass' | 'blackhole' | 'drop-replies'

export interface FaultProxy {
  readonly port: number
  mode: ProxyMode
  close(): Promise<void>
}

/** A TCP proxy on loopback in front of `target`, for fault tests. */
export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
  }
  const server = createServer((client) => {
    track(client)
    const upstream = new Socket()
    track(upstream)
    upstream.connect(target.port, target.host)
    client.on('data', (bytes) => {
      if (proxy.mode !== 'blackhole') upstream.write(bytes)
    })
    upstream.on('data', (bytes) => {
      if (proxy.mode === 'pass') client.write(bytes)
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => {
      // A server that hangs up is passed on, unless the proxy plays a silent network.
      if (proxy.mode === 'pass') client.destroy()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP port')
  const proxy: FaultProxy = {
    port: address.port,
    mode: 'pass',
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  return proxy
}
