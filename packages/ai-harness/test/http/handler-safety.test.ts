import { connect } from 'node:net'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createHost, HarnessError, type HarnessStore } from '@tanstack/ai-harness'
import type { LogEntry } from '@tanstack/ai-harness/store'
import { createHarnessHandler } from '@tanstack/ai-harness/http'
import { toNodeListener } from '@tanstack/ai-harness/http/node'
import { drain } from '@tanstack/ai-harness/testing'
import { dumpMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { asker, BASE, body, session, world } from './handler-world.js'

/** A store that counts the records its reads returned. */
function counting(store: HarnessStore) {
  const seen = { records: 0, reads: 0 }
  const wrapped: HarnessStore = {
    ...store,
    read: async (logId, options) => {
      const page = await store.read(logId, options)
      seen.reads++
      seen.records += page.length
      return page
    },
  }
  return { store: wrapped, seen }
}

/** Appends `count` app records of `bytes` each to a log. */
async function longLog(store: HarnessStore, logId: string, count: number, bytes = 10) {
  const text = 'x'.repeat(bytes)
  const start = (await store.read(logId, { after: 0, limit: 100_000 })).length
  let seq = start + 1
  const per = Math.max(1, Math.min(500, Math.floor(500_000 / bytes)))
  for (let i = 0; i < count; i += per) {
    const batch = Array.from({ length: Math.min(per, count - i) }, (_, k) => ({ type: 'app.note', n: i + k, text }))
    await store.append(logId, seq, batch)
    seq += batch.length
  }
  return start + count
}

describe('tenants: authorize scopes what a caller sees', () => {
  async function tenants() {
    const w = await world((_request, _action, _id) => ({ prefix: 'tenant-a/' }))
    for (const id of ['tenant-a/1', 'tenant-b/1', 'tenant-a/2', 'tenant-a', 'tenant-a0']) {
      await drain((await w.host.open({ sessionId: id })).send('pay'))
    }
    return w
  }

  it('a prefix from authorize scopes the listing and ?waiting=1: other tenants’ ids are never listed', async () => {
    const w = await tenants()
    expect(await body(await w.call('/sessions'))).toEqual({ sessions: ['tenant-a/1', 'tenant-a/2'], next: null })
    expect(await body(await w.call('/sessions?waiting=1'))).toEqual({ sessions: ['tenant-a/1', 'tenant-a/2'], next: null })
    expect(await body(await w.call('/sessions?limit=1'))).toEqual({ sessions: ['tenant-a/1'], next: 'tenant-a/1' })
    expect(await body(await w.call('/sessions?limit=1&after=tenant-a%2F1'))).toEqual({ sessions: ['tenant-a/2'], next: 'tenant-a/2' })
    // A cursor from elsewhere does not lead out of the scope.
    expect(await body(await w.call('/sessions?after=a'))).toEqual({ sessions: ['tenant-a/1', 'tenant-a/2'], next: null })
  })

  it('the same scope refuses the actions of a session outside it with 403, before the store is touched', async () => {
    const w = await tenants()
    const before = dumpMemoryData(w.store.data)
    for (const path of [session('tenant-b/1'), `${session('tenant-b/1')}/events`, session('order 7/a')]) {
      const response = await w.call(path)
      expect([path, response.status, (await body(response)).code]).toEqual([path, 403, 'FORBIDDEN'])
    }
    const cancel = await w.call(`${session('tenant-b/1')}/cancel`, { json: {} })
    expect(cancel.status).toBe(403)
    expect(dumpMemoryData(w.store.data)).toBe(before)
    expect((await w.call(session('tenant-a/1'))).status).toBe(200)
  })

  it('a filter from authorize scopes a listing too, page by page', async () => {
    const w = await world(() => ({ filter: (id: string) => id.endsWith('/2') }))
    for (const id of ['a/1', 'a/2', 'b/1', 'b/2']) await w.store.append(id, 1, [{ type: 'app.note' }])
    expect(await body(await w.call('/sessions'))).toEqual({ sessions: ['a/2', 'b/2'], next: null })
    expect((await w.call(session('a/1'))).status).toBe(403)
  })

  it('authorize runs before a malformed session id is refused: 403 for a refused caller, 400 for an allowed one', async () => {
    const refused = await world(() => false)
    const denied = await refused.call('/sessions/%E0%A4%A')
    expect([denied.status, (await body(denied)).code]).toEqual([403, 'FORBIDDEN'])
    expect(refused.asked).toEqual([['session.read', '%E0%A4%A']])
    const allowed = await world()
    const bad = await allowed.call('/sessions/%E0%A4%A/answer', { json: { questionId: 'q', answer: 1 } })
    expect([bad.status, (await body(bad)).code]).toEqual([400, 'INVALID_ARGUMENT'])
  })
})

describe('what a response leaks', () => {
  it('a 503 says the store is unavailable, never the driver’s message; onError gets the error', async () => {
    const store = memoryStore()
    const down: HarnessStore = {
      ...store,
      read: async () => {
        throw new HarnessError('STORE_UNAVAILABLE', 'connect ECONNREFUSED 127.0.0.1:1 (pg pool, user postgres)')
      },
    }
    const told: unknown[] = []
    const handler = createHarnessHandler({
      host: createHost({ store: down, harnesses: asker() }),
      authorize: () => true,
      onError: (error) => told.push(error),
    })
    for (const path of ['/sessions/s-1', '/sessions/s-1/events']) {
      const response = await handler(new Request(`http://x${path}`))
      const text = await response.text()
      expect([response.status, JSON.parse(text).code]).toEqual([503, 'STORE_UNAVAILABLE'])
      expect(text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/)
    }
    expect(told).toHaveLength(2)
  })

  it('__proto__ and constructor are unknown fields of a body, like any other name', async () => {
    const w = await world()
    const before = dumpMemoryData(w.store.data)
    const [question] = (await body(await w.call(session('order 7/a')))).questions as Array<{ questionId: string }>
    for (const extra of ['"__proto__":{"ok":true}', '"constructor":1', '"toString":"x"', '"hasOwnProperty":1']) {
      const response = await w.call(`${session('order 7/a')}/answer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"questionId":${JSON.stringify(question!.questionId)},"answer":{"ok":true},${extra}}`,
      })
      expect([extra, response.status, (await body(response)).code]).toEqual([extra, 400, 'BODY_INVALID'])
    }
    const cancel = await w.call(`${session('order 7/a')}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"constructor":{"name":"x"}}',
    })
    expect([cancel.status, (await body(cancel)).code]).toEqual([400, 'BODY_INVALID'])
    expect(dumpMemoryData(w.store.data)).toBe(before)
  })

  it("a host without the session's harness refuses an answer it cannot check for secrets, and writes nothing", async () => {
    const w = await world()
    const blind = createHarnessHandler({ host: createHost({ store: w.store, harnesses: [] }), authorize: () => true })
    const [question] = (await body(await w.call(session('order 7/a')))).questions as Array<{ questionId: string }>
    const before = dumpMemoryData(w.store.data)
    const response = await blind(
      new Request(`${BASE.replace('/api', '')}${session('order 7/a')}/answer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ questionId: question!.questionId, answer: { ok: true } }),
      }),
    )
    expect([response.status, (await body(response)).code]).toEqual([501, 'CAPABILITY_MISSING'])
    expect(dumpMemoryData(w.store.data)).toBe(before)
  })
})

describe('a long log', () => {
  it('is read in pages: every record once, with where each page ends, and the last page reaches lastSeq', async () => {
    const w = await world()
    const total = await longLog(w.store, 'order 7/a', 2500)
    const seqs: number[] = []
    let after = 0
    for (let pages = 0; pages < 10; pages++) {
      const view = await body(await w.call(`${session('order 7/a')}?after=${after}`))
      seqs.push(...(view.entries as LogEntry[]).map((e) => e.seq))
      expect(view.lastSeq).toBe(total)
      if (view.next === null) break
      after = view.next as number
    }
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1))
    const tail = await body(await w.call(`${session('order 7/a')}?after=${total - 4}&limit=10`))
    expect([(tail.entries as LogEntry[]).length, tail.next]).toEqual([4, null])
  })

  it('an event stream whose client reads nothing reads one page of the log, not the log', async () => {
    const w = await world()
    await longLog(w.store, 'order 7/a', 5000)
    const { store, seen } = counting(w.store)
    const handler = createHarnessHandler({ host: createHost({ store, harnesses: w.harness }), authorize: () => true, pollMs: 5 })
    const stop = new AbortController()
    const response = await handler(new Request(`http://x${session('order 7/a')}/events`, { signal: stop.signal }))
    expect(response.status).toBe(200)
    for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(seen.records).toBeLessThanOrEqual(200)
    // Reading goes on as the client reads.
    const reader = response.body!.getReader()
    let text = ''
    while (!text.includes('"n":999,')) text += new TextDecoder().decode((await reader.read()).value)
    expect(seen.records).toBeLessThan(1300)
    stop.abort()
    await reader.cancel()
  })

  it('on node:http, a client that reads nothing holds back the stream at the socket: the server does not pull the whole log', async () => {
    const w = await world()
    const log = await longLog(w.store, 'order 7/a', 4000, 8000)
    const { store, seen } = counting(w.store)
    const handler = createHarnessHandler({ host: createHost({ store, harnesses: w.harness }), authorize: () => true, pollMs: 5 })
    const server = createServer(toNodeListener(handler))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const socket = connect(port, '127.0.0.1')
    socket.write(`GET /sessions/${encodeURIComponent('order 7/a')}/events HTTP/1.1\r\nhost: x\r\n\r\n`)
    socket.pause()
    // Until the server stops reading (the socket's buffers are full): then it holds what they hold.
    let last = -1
    for (let i = 0; i < 100 && seen.records !== last; i++) {
      last = seen.records
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(seen.records).toBeLessThan(log / 2)
    socket.destroy()
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
})
