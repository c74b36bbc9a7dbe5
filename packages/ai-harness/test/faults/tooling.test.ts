import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net'
import { appendOf, faultyStore } from '@tanstack/ai-harness/testing'
import { startFaultProxy } from '@tanstack/ai-harness/testing/node'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { afterEach, describe, expect, it } from 'vitest'
import { within } from '../support/faults.js'

/** An echo server that also records every byte it received. */
async function echoServer(): Promise<{ server: Server; port: number; received: () => string }> {
  let received = ''
  const server = createServer((socket) => {
    socket.on('data', (chunk) => {
      received += chunk.toString()
      socket.write(chunk)
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  return { server, port: (server.address() as AddressInfo).port, received: () => received }
}

/** Sends `text` and reports what came back: the echo, a reset, or nothing within `ms`. */
function exchange(port: number, text: string, ms = 300): Promise<string> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ host: '127.0.0.1', port }, () => socket.write(text))
    const timer = setTimeout(() => {
      socket.destroy()
      resolve('no reply')
    }, ms)
    socket.on('data', (chunk) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(`reply ${chunk.toString()}`)
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve(error.code ?? 'error')
    })
    socket.on('close', () => {
      clearTimeout(timer)
      resolve('closed')
    })
  })
}

describe('the fault proxy', () => {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup()
  })
  async function setup() {
    const echo = await echoServer()
    const proxy = await startFaultProxy({ target: { port: echo.port } })
    cleanups.push(
      () => proxy.close(),
      () => new Promise((resolve) => echo.server.close(() => resolve())),
    )
    return { echo, proxy }
  }

  it('forwards both ways without a rule', async () => {
    const { proxy } = await setup()
    expect(await exchange(proxy.port, 'hello')).toBe('reply hello')
  })

  it('reset: the request never reaches the server and the client is reset', async () => {
    const { echo, proxy } = await setup()
    const rule = proxy.rule({ when: 'secret', action: 'reset' })
    expect(await exchange(proxy.port, 'a secret')).toBe('ECONNRESET')
    expect(echo.received()).toBe('')
    expect(rule.hits).toBe(1)
    expect(await exchange(proxy.port, 'a secret'), 'a rule hits once by default').toBe('reply a secret')
  })

  it('cut-reply: the request reaches the server, its reply is dropped and the client reset', async () => {
    const { echo, proxy } = await setup()
    proxy.rule({ when: 'write', action: 'cut-reply' })
    expect(await exchange(proxy.port, 'write 1')).toBe('ECONNRESET')
    expect(echo.received()).toBe('write 1')
  })

  it('hang-reply: the request reaches the server, the client waits with the connection open', async () => {
    const { echo, proxy } = await setup()
    proxy.rule({ when: 'write', action: 'hang-reply' })
    expect(await exchange(proxy.port, 'write 2')).toBe('no reply')
    expect(echo.received()).toBe('write 2')
  })

  it('blackhole and blackholeAll: nothing reaches the server, nothing comes back; heal ends it', async () => {
    const { echo, proxy } = await setup()
    proxy.rule({ action: 'blackhole' })
    expect(await exchange(proxy.port, 'lost')).toBe('no reply')
    proxy.blackholeAll()
    expect(await exchange(proxy.port, 'lost too')).toBe('no reply')
    expect(echo.received()).toBe('')
    proxy.heal()
    expect(await exchange(proxy.port, 'back')).toBe('reply back')
  })

  it('matches a pattern split across packets', async () => {
    const { echo, proxy } = await setup()
    proxy.rule({ when: 'harness.answer', action: 'hang-reply' })
    const socket = connect({ host: '127.0.0.1', port: proxy.port })
    let replies = ''
    socket.on('data', (chunk) => {
      replies += chunk.toString()
    })
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.write('{"type":"harness.ans')
    await new Promise((resolve) => setTimeout(resolve, 30))
    socket.write('wer"}')
    await new Promise((resolve) => setTimeout(resolve, 100))
    socket.destroy()
    expect(echo.received()).toBe('{"type":"harness.answer"}')
    expect(replies).toBe('{"type":"harness.ans')
  })
})

describe('the faulty store', () => {
  const record = { type: 'harness.answer', answer: 1 }

  it('fail: the call never reaches the store; lose-reply: it runs, then fails', async () => {
    const inner = memoryStore()
    const store = faultyStore(inner)
    store.inject({ match: 'append', fault: { kind: 'fail' } })
    await expect(store.append('s', 1, [record])).rejects.toMatchObject({ code: 'ECONNRESET' })
    expect(await inner.read('s')).toEqual([])
    store.inject({ match: appendOf('harness.answer'), fault: { kind: 'lose-reply' } })
    await expect(store.append('s', 1, [record])).rejects.toMatchObject({ code: 'ECONNRESET' })
    expect(await inner.read('s')).toHaveLength(1)
    expect(store.calls.map((c) => c.outcome)).toEqual(['fail', 'lose-reply'])
  })

  it('hang never answers (run: true lets the write land first); stall waits for resume(); skip lets calls through first', async () => {
    const inner = memoryStore()
    const store = faultyStore(inner)
    store.inject({ match: 'append', fault: { kind: 'hang', run: true }, skip: 1 })
    await store.append('s', 1, [record])
    let settled = false
    void store.append('s', 2, [record]).finally(() => {
      settled = true
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(settled).toBe(false)
    expect(await inner.read('s')).toHaveLength(2)
    const stall = store.inject({ match: 'read', fault: { kind: 'stall' } })
    const reading = store.read('s')
    await stall.hit
    stall.resume()
    expect(await within(1_000, reading)).toHaveLength(2)
  })

  it('freeze holds every call until thaw', async () => {
    const store = faultyStore(memoryStore())
    store.freeze()
    let done = false
    const reading = store.read('s').then(() => {
      done = true
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(done).toBe(false)
    store.thaw()
    await within(1_000, reading)
    expect(done).toBe(true)
  })
})
