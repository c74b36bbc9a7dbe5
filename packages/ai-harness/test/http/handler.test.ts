import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toolDefinition } from '@tanstack/ai'
import { createHost, createWorker, defineHarness, durableTool } from '@tanstack/ai-harness'
import type { LogEntry } from '@tanstack/ai-harness/store'
import { createHarnessHandler } from '@tanstack/ai-harness/http'
import { toNodeListener } from '@tanstack/ai-harness/http/node'
import { createManualClock, drain, scriptedText } from '@tanstack/ai-harness/testing'
import { dumpMemoryData, memoryStore } from '@tanstack/ai-harness-memory'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { asker, BASE, body, session, world } from './handler-world.js'

describe('createHarnessHandler', () => {
  it('refuses to start without authorize, or without a host', () => {
    const host = createHost({ store: memoryStore(), harnesses: asker() })
    expect(() => createHarnessHandler({ host } as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(() => createHarnessHandler({ host, authorize: 'yes' } as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(() => createHarnessHandler({ authorize: () => true } as never)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
  })

  it('lists sessions, and those waiting for a person, in pages with a cursor', async () => {
    const w = await world()
    await w.store.append('idle-1', 1, [{ type: 'app.note' }])
    let response = await w.call('/sessions?limit=1')
    expect(response.status).toBe(200)
    expect(await body(response)).toEqual({ sessions: ['idle-1'], next: 'idle-1' })
    expect(await body(await w.call('/sessions?limit=1&after=idle-1'))).toEqual({ sessions: ['order 7/a'], next: 'order 7/a' })
    expect(await body(await w.call('/sessions?after=order%207%2Fa'))).toEqual({ sessions: [], next: null })
    response = await w.call('/sessions?waiting=1')
    expect(await body(response)).toEqual({ sessions: ['order 7/a'], next: 'order 7/a' })
    expect(w.asked).toContainEqual(['sessions.list', undefined])
  })

  it("leaves the harness's own logs (inboxes, streams, locks) out of every listing, scoped or not", async () => {
    const w = await world()
    for (const id of ['harness.inbox/order 7/a', 'harness.lock/k', 'harness.stream/order 7/a/input/1'])
      await w.store.append(id, 1, [{ type: 'app.note' }])
    expect(await body(await w.call('/sessions'))).toMatchObject({ sessions: ['order 7/a'] })
    const scoped = await world(() => ({ filter: () => true }))
    await scoped.store.append('harness.stream/x', 1, [{ type: 'app.note' }])
    expect(await body(await scoped.call('/sessions'))).toMatchObject({ sessions: ['order 7/a'] })
  })

  it("refuses a session id in the harness's own namespace, writing nothing", async () => {
    const store = memoryStore()
    const host = createHost({ store, harnesses: asker() })
    await expect(host.open({ sessionId: 'harness.stream/x' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await expect(host.submit({ sessionId: 'harness.inbox/x', inputId: 'i1', prompt: 'hi' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    })
    expect(await store.sessions!.list()).toEqual([])
  })

  it("reads a session's status, open questions and records", async () => {
    const w = await world()
    const view = await body(await w.call(session('order 7/a')))
    // The view speaks SessionStatus, as session.status does: `parked`, and why (it said `waiting` before issue 26).
    expect(view).toMatchObject({
      sessionId: 'order 7/a',
      harness: 'asker',
      status: 'parked',
      parked: { reason: 'ask', until: null },
      turns: 1,
    })
    // The questions are the log's OpenQuestion, as openWaits gives them: with the session's id, and no `rejected` until an answer is refused.
    expect(view.questions).toEqual([
      {
        sessionId: 'order 7/a',
        questionId: expect.stringMatching(/:amount$/),
        toolCallId: expect.any(String),
        name: 'amount',
        message: 'Charge 42 EUR?',
        schema: expect.any(Object),
      },
    ])
    const entries = view.entries as LogEntry[]
    expect(entries.map((e) => e.record.type)).toContain('harness.ask')
    expect(view.lastSeq).toBe(entries.at(-1)!.seq)
    const page = await body(await w.call(`${session('order 7/a')}?after=2&limit=2`))
    expect((page.entries as LogEntry[]).map((e) => e.seq)).toEqual([3, 4])
    expect(w.asked).toContainEqual(['session.read', 'order 7/a'])
  })

  it('answers a question: an invalid answer is 422 ANSWER_INVALID and writes nothing; a valid one resumes the session', async () => {
    const w = await world()
    const [question] = (await body(await w.call(session('order 7/a')))).questions as Array<{ questionId: string }>
    const before = dumpMemoryData(w.store.data)
    const bad = await w.call(`${session('order 7/a')}/answer`, { json: { questionId: question!.questionId, answer: { ok: 'yes' } } })
    expect(bad.status).toBe(422)
    expect(await body(bad)).toMatchObject({ code: 'ANSWER_INVALID' })
    expect(dumpMemoryData(w.store.data)).toBe(before)
    const good = await w.call(`${session('order 7/a')}/answer`, { json: { questionId: question!.questionId, answer: { ok: true } } })
    expect(good.status).toBe(200)
    const again = await w.call(`${session('order 7/a')}/answer`, { json: { questionId: question!.questionId, answer: { ok: false } } })
    expect([again.status, (await body(again)).code]).toEqual([409, 'ALREADY_ANSWERED'])
    expect(await body(await w.call('/sessions?waiting=1'))).toEqual({ sessions: [], next: null })
    const worker = createWorker({ store: w.store, harnesses: w.harness, clock: w.clock, workerId: 'worker' })
    expect((await worker.poll()).resumed).toEqual(['order 7/a'])
    await worker.stop()
    const view = await body(await w.call(session('order 7/a')))
    expect(view).toMatchObject({ status: 'idle', parked: null })
    expect((view.entries as LogEntry[]).find((e) => e.record.type === 'harness.tool.result')?.record.result).toBe('charged')
  })

  it('refuses unauthorised requests with 403 FORBIDDEN before touching the store, on every route', async () => {
    const w = await world(() => false)
    const before = dumpMemoryData(w.store.data)
    const reads = await w.store.read('order 7/a')
    const [question] = reads.map((e) => e.record).filter((r) => r.type === 'harness.ask')
    const questionId = `${question!.toolCallId}:amount`
    const requests: Array<[string, RequestInit & { json?: unknown }]> = [
      ['/sessions', {}],
      [session('order 7/a'), {}],
      [`${session('order 7/a')}/events`, {}],
      [`${session('order 7/a')}/answer`, { json: { questionId, answer: { ok: true } } }],
      [`${session('order 7/a')}/approve`, { json: { toolCallId: 'x', approved: true } }],
      [`${session('order 7/a')}/cancel`, { json: {} }],
    ]
    for (const [path, init] of requests) {
      const response = await w.call(path, init)
      expect([path, response.status, (await body(response)).code]).toEqual([path, 403, 'FORBIDDEN'])
    }
    expect(w.asked.map(([action]) => action)).toEqual([
      'sessions.list',
      'session.read',
      'session.watch',
      'session.answer',
      'session.approve',
      'session.cancel',
    ])
    // authorize comes before the body is read: a refused caller learns nothing about its input.
    const garbage = await w.call(`${session('order 7/a')}/answer`, { method: 'POST', body: '{not json' })
    expect([garbage.status, (await body(garbage)).code]).toEqual([403, 'FORBIDDEN'])
    const badId = await w.call(`/sessions/${'x'.repeat(3000)}`)
    expect([badId.status, (await body(badId)).code]).toEqual([403, 'FORBIDDEN'])
    expect(dumpMemoryData(w.store.data)).toBe(before)
  })

  it('an authorize that throws or answers something other than true refuses too', async () => {
    for (const answer of [() => 'yes' as never, async () => 1 as never, () => undefined as never]) {
      const w = await world(answer)
      expect((await w.call('/sessions')).status).toBe(403)
    }
    const w = await world(() => {
      throw new Error('token store down')
    })
    const response = await w.call('/sessions')
    expect([response.status, (await body(response)).code]).toEqual([500, 'INTERNAL_ERROR'])
    expect(JSON.stringify(await w.call('/sessions').then(body))).not.toContain('token store down')
  })

  it('refuses malformed requests with typed 4xx errors, never a stack trace, and writes nothing', async () => {
    const w = await world()
    const before = dumpMemoryData(w.store.data)
    const answer = `${session('order 7/a')}/answer`
    const cases: Array<[string, RequestInit & { json?: unknown }, number, string]> = [
      ['/nothing-here', {}, 404, 'ROUTE_NOT_FOUND'],
      ['/sessions/a/b/c', {}, 404, 'ROUTE_NOT_FOUND'],
      [answer, {}, 405, 'METHOD_NOT_ALLOWED'],
      ['/sessions', { method: 'POST' }, 405, 'METHOD_NOT_ALLOWED'],
      ['/sessions/%E0%A4%A', {}, 400, 'INVALID_ARGUMENT'],
      [`/sessions/${'x'.repeat(3000)}`, {}, 400, 'INVALID_ARGUMENT'],
      ['/sessions?limit=-1', {}, 400, 'INVALID_ARGUMENT'],
      ['/sessions?limit=abc', {}, 400, 'INVALID_ARGUMENT'],
      ['/sessions?waiting=maybe', {}, 400, 'INVALID_ARGUMENT'],
      [`${session('order 7/a')}?after=-3`, {}, 400, 'INVALID_ARGUMENT'],
      [session('nobody'), {}, 404, 'SESSION_NOT_FOUND'],
      [answer, { method: 'POST', body: '{"questionId":"q","answer":1}' }, 400, 'BODY_INVALID'],
      [answer, { method: 'POST', body: '{not json', headers: { 'content-type': 'application/json' } }, 400, 'BODY_INVALID'],
      [answer, { json: [1, 2] }, 400, 'BODY_INVALID'],
      [answer, { json: { questionId: 7, answer: {} } }, 400, 'BODY_INVALID'],
      [answer, { json: { questionId: 'q' } }, 400, 'BODY_INVALID'],
      [answer, { json: { questionId: 'q', answer: {}, extra: 1 } }, 400, 'BODY_INVALID'],
      [answer, { json: { questionId: 'q', answer: { ok: true } } }, 404, 'QUESTION_NOT_FOUND'],
      [answer, { json: { questionId: 'q', answer: 'x'.repeat(2 * 1024 * 1024) } }, 413, 'BODY_TOO_LARGE'],
      [`${session('nobody')}/answer`, { json: { questionId: 'q', answer: 1 } }, 404, 'QUESTION_NOT_FOUND'],
      [`${session('order 7/a')}/approve`, { json: { toolCallId: 'c', approved: true } }, 404, 'APPROVAL_NOT_FOUND'],
      [`${session('order 7/a')}/approve`, { json: { toolCallId: 'c', approved: 'yes' } }, 400, 'BODY_INVALID'],
      [`${session('nobody')}/cancel`, { json: {} }, 404, 'SESSION_NOT_FOUND'],
      [`${session('order 7/a')}/cancel`, { json: { reason: 3 } }, 400, 'BODY_INVALID'],
    ]
    for (const [path, init, status, code] of cases) {
      const response = await w.call(path, init)
      const text = await response.text()
      expect([path.slice(0, 40), response.status, JSON.parse(text).code]).toEqual([path.slice(0, 40), status, code])
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/)
    }
    expect(dumpMemoryData(w.store.data)).toBe(before)
  })

  it('cancels the open turn of a parked session; a second cancel finds no open turn', async () => {
    const w = await world()
    const response = await w.call(`${session('order 7/a')}/cancel`, { json: { reason: 'customer left' } })
    expect(response.status).toBe(200)
    const view = await body(await w.call(session('order 7/a')))
    expect(view).toMatchObject({ status: 'idle', questions: [] })
    expect((view.entries as LogEntry[]).at(-1)?.record).toMatchObject({ type: 'harness.turn.cancelled', reason: 'customer left' })
    const again = await w.call(`${session('order 7/a')}/cancel`, { json: {} })
    expect([again.status, (await body(again)).code]).toEqual([409, 'SESSION_BUSY'])
  })

  it('a cancel while another host drives the session is 409 LEASE_HELD and writes nothing', async () => {
    const w = await world()
    const driver = await w.host.open({ sessionId: 'order 7/a' })
    const other = createHost({ store: w.store, harnesses: w.harness, clock: w.clock })
    const handler = createHarnessHandler({ host: other, authorize: () => true })
    const before = dumpMemoryData(w.store.data)
    const response = await handler(
      new Request(`http://x/sessions/${encodeURIComponent('order 7/a')}/cancel`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      }),
    )
    expect([response.status, (await body(response)).code]).toEqual([409, 'LEASE_HELD'])
    expect(dumpMemoryData(w.store.data)).toBe(before)
    await driver.close()
  })

  it('shows a call that waits for approval, approves it over HTTP, and a worker runs it; a second decision is refused', async () => {
    const clock = createManualClock(Date.UTC(2026, 0, 1))
    const store = memoryStore({ clock })
    const runs: string[] = []
    const harness = defineHarness({
      name: 'payer',
      adapter: scriptedText(({ messages }) =>
        messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'pay', args: { invoice: 'inv-7' }, id: 'call-pay' }] } : 'Done.',
      ),
      tools: [
        durableTool(
          toolDefinition({ name: 'pay', description: 'Pays', inputSchema: z.object({ invoice: z.string() }), needsApproval: true }),
          async ({ invoice }, { step }) => step.do(`charge:${invoice}`, () => void runs.push(invoice)),
        ),
      ],
    })
    const host = createHost({ store, harnesses: harness, clock, hostId: 'web' })
    await drain((await host.open({ sessionId: 'pay-1' })).send('pay'))
    const handler = createHarnessHandler({ host, authorize: () => true })
    const post = (path: string, json: unknown) =>
      handler(
        new Request(`http://x${path}`, { method: 'POST', body: JSON.stringify(json), headers: { 'content-type': 'application/json' } }),
      )
    const view = await body(await handler(new Request('http://x/sessions/pay-1')))
    expect(view).toMatchObject({
      status: 'parked',
      parked: { reason: 'approval', until: null },
      approvals: [{ toolCallId: 'call-pay', toolName: 'pay', input: { invoice: 'inv-7' } }],
    })
    expect(runs).toEqual([])
    const approved = await post('/sessions/pay-1/approve', { toolCallId: 'call-pay', approved: true })
    expect(approved.status).toBe(200)
    const again = await post('/sessions/pay-1/approve', { toolCallId: 'call-pay', approved: false })
    expect([again.status, (await body(again)).code]).toEqual([409, 'ALREADY_DECIDED'])
    const worker = createWorker({ store, harnesses: harness, clock, workerId: 'worker' })
    expect((await worker.poll()).resumed).toEqual(['pay-1'])
    await worker.stop()
    expect(runs).toEqual(['inv-7'])
    expect(await body(await handler(new Request('http://x/sessions/pay-1')))).toMatchObject({ status: 'idle', approvals: [] })
  })
})

/** Reads server-sent events from a stream until `until` says stop. */
async function readEvents(
  stream: ReadableStream<Uint8Array>,
  until: (events: Array<{ id?: string; event?: string; data?: string }>) => boolean,
) {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  const events: Array<{ id?: string; event?: string; data?: string }> = []
  let text = ''
  while (!until(events)) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    let end = text.indexOf('\n\n')
    while (end >= 0) {
      const block = text.slice(0, end)
      text = text.slice(end + 2)
      const event: Record<string, string> = {}
      for (const line of block.split('\n')) {
        const at = line.indexOf(': ')
        if (line.startsWith(':') || at < 0) continue
        event[line.slice(0, at)] = line.slice(at + 2)
      }
      if (event.event || event.data) events.push(event)
      end = text.indexOf('\n\n')
    }
  }
  await reader.cancel()
  return events
}

describe('the events stream', () => {
  it('streams the records after a seq, then each new one as a worker drives the session, until the client goes', async () => {
    const w = await world()
    const controller = new AbortController()
    const response = await w.handler(new Request(`${BASE}${session('order 7/a')}/events?after=3`, { signal: controller.signal }))
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const seen = readEvents(response.body!, (events) =>
      events.some((e) => e.data && (JSON.parse(e.data) as LogEntry).record.type === 'harness.turn.finished'),
    )
    const [question] = (await body(await w.call(session('order 7/a')))).questions as Array<{ questionId: string }>
    await w.call(`${session('order 7/a')}/answer`, { json: { questionId: question!.questionId, answer: { ok: true } } })
    const worker = createWorker({ store: w.store, harnesses: w.harness, clock: w.clock, workerId: 'worker' })
    await worker.poll()
    await worker.stop()
    const events = await seen
    controller.abort()
    const entries = events.map((e) => JSON.parse(e.data!) as LogEntry)
    expect(entries[0]!.seq).toBe(4)
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => 4 + i))
    expect(events.every((e, i) => e.event === 'record' && e.id === String(entries[i]!.seq))).toBe(true)
    expect(entries.map((e) => e.record.type)).toEqual(
      expect.arrayContaining(['harness.answer', 'harness.tool.result', 'harness.turn.finished']),
    )
  })

  it('resumes after the Last-Event-ID a reconnecting EventSource sends', async () => {
    const w = await world()
    const response = await w.handler(new Request(`${BASE}${session('order 7/a')}/events`, { headers: { 'last-event-id': '2' } }))
    const events = await readEvents(response.body!, (events) => events.length > 0)
    expect((JSON.parse(events[0]?.data ?? 'null') as LogEntry).seq).toBe(3)
  })
})

describe('toNodeListener', () => {
  const servers: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const close of servers.splice(0)) await close()
  })

  it('serves the handler on node:http: JSON routes, a refused request, and an event stream that ends when the client goes', async () => {
    const w = await world((request) => request.headers.get('authorization') === 'Bearer let-me-in')
    const server = createServer(toNodeListener(w.handler))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push(() => new Promise((resolve) => server.close(() => resolve())))
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`
    const auth = { authorization: 'Bearer let-me-in' }
    const denied = await fetch(`${origin}/sessions`)
    expect([denied.status, ((await denied.json()) as { code: string }).code]).toEqual([403, 'FORBIDDEN'])
    const listed = await fetch(`${origin}/sessions`, { headers: auth })
    expect(await listed.json()).toEqual({ sessions: ['order 7/a'], next: 'order 7/a' })
    const view = (await (await fetch(`${origin}${session('order 7/a')}`, { headers: auth })).json()) as {
      questions: Array<{ questionId: string }>
    }
    const bad = await fetch(`${origin}${session('order 7/a')}/answer`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ questionId: view.questions[0]!.questionId, answer: { ok: 'no' } }),
    })
    expect([bad.status, ((await bad.json()) as { code: string }).code]).toEqual([422, 'ANSWER_INVALID'])
    const good = await fetch(`${origin}${session('order 7/a')}/answer`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ questionId: view.questions[0]!.questionId, answer: { ok: true } }),
    })
    expect(good.status).toBe(200)
    const client = new AbortController()
    const stream = await fetch(`${origin}${session('order 7/a')}/events?after=0`, { headers: auth, signal: client.signal })
    const events = await readEvents(stream.body!, (events) => events.some((e) => e.data?.includes('harness.answer')))
    expect(events[0]!.id).toBe('1')
    client.abort()
    // The server noticed the client going: closing it does not wait for the stream.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    servers.length = 0
    await closed
  })
})
