import { defineHarness } from '@tanstack/ai-harness'
import { createChatRoute } from '@tanstack/ai-harness/http'
import { recordsOf, scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { createWorld } from '../support/harness.js'

const harness = defineHarness({ name: 'echo', adapter: scriptedText(({ messages }) => `echo ${String(messages.at(-1)?.content)}`) })

/** The SSE events of a response: each with its id (the durable offset) and its chunk. */
async function eventsOf(response: Response): Promise<Array<{ id: string; type: string }>> {
  const text = await response.text()
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const id = /^id: ?(.*)$/m.exec(block)?.[1] ?? ''
      const data = JSON.parse(/^data: ?(.*)$/m.exec(block)?.[1] ?? '{}') as { type?: string; chunk?: { type?: string } }
      return { id, type: String(data.chunk?.type ?? data.type) }
    })
}

const post = (body: unknown) => new Request('http://app/chat', { method: 'POST', body: JSON.stringify(body) })

describe('createChatRoute', () => {
  it('a POST submits and streams the turn; a second POST of the same inputId is the same turn; a GET resumes after an offset', async () => {
    const world = createWorld()
    const { host } = world.start(harness, 'a')
    const route = createChatRoute({ host, authorize: () => true })
    const body = { sessionId: 's', inputId: 'i-1', messages: [{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }] }
    const first = await route.POST(post(body))
    expect(first.headers.get('X-Run-Id')).toBe('s/input/i-1')
    const events = await eventsOf(first)
    expect(events.at(-1)?.type).toBe('RUN_FINISHED')
    const again = await eventsOf(await route.POST(post(body)))
    expect(again.map((e) => e.id)).toEqual(events.map((e) => e.id))
    const resumed = await eventsOf(await route.GET(new Request('http://app/chat', { headers: { 'Last-Event-ID': events[1]!.id } })))
    expect(resumed.map((e) => e.id)).toEqual(events.slice(2).map((e) => e.id))
    expect(recordsOf(await world.read('s'), 'harness.turn.started')).toHaveLength(1)
  })

  it('refuses a session the request may not use, and a prompt the session cannot take', async () => {
    const world = createWorld()
    const { host } = world.start(harness, 'a')
    const route = createChatRoute({ host, authorize: (_r, id) => id !== 'secret' })
    expect((await route.POST(post({ sessionId: 'secret', inputId: 'x', prompt: 'hi' }))).status).toBe(403)
    const bad = await route.POST(post({ sessionId: 's', inputId: 'no spaces', prompt: 'hi' }))
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { code: string }).code).toBe('INVALID_ARGUMENT')
  })

  it("takes TanStack AI client's body (threadId, runId) and resumes a re-sent POST after its Last-Event-ID", async () => {
    const world = createWorld()
    const { host } = world.start(harness, 'a')
    const route = createChatRoute({ host, authorize: () => true })
    // The body `fetchServerSentEvents` of @tanstack/ai-client sends: AG-UI's RunAgentInput.
    const body = {
      threadId: 't',
      runId: 'run-1',
      messages: [{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }],
      forwardedProps: {},
    }
    const first = await route.POST(post(body))
    expect(first.headers.get('X-Run-Id')).toBe('t/input/run-1')
    const events = await eventsOf(first)
    // The client's reconnect re-sends the same POST with the last offset it saw: the rest, once.
    const resent = new Request('http://app/chat', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Last-Event-ID': events[2]!.id },
    })
    expect((await eventsOf(await route.POST(resent))).map((e) => e.id)).toEqual(events.slice(3).map((e) => e.id))
    expect(recordsOf(await world.read('t'), 'harness.turn.started')).toHaveLength(1)
  })

  it('answers the client hydration (GET ?threadId): the transcript, and the run still going', async () => {
    const world = createWorld()
    const { host } = world.start(harness, 'a')
    const route = createChatRoute({ host, authorize: (_r, id) => id !== 'secret' })
    const hydrate = async (threadId: string) =>
      (await (await route.GET(new Request(`http://app/chat?threadId=${threadId}`))).json()) as {
        messages: Array<{ role: string; parts: Array<{ type: string; content?: string }> }>
        activeRun: { runId: string } | null
      }
    expect(await hydrate('none')).toEqual({ messages: [], activeRun: null, interrupts: null })
    await eventsOf(await route.POST(post({ sessionId: 's', inputId: 'i-1', prompt: 'one' })))
    const done = await hydrate('s')
    expect(done.activeRun).toBeNull()
    expect(done.messages.map((m) => [m.role, m.parts.find((p) => p.type === 'text')?.content])).toEqual([
      ['user', 'one'],
      ['assistant', 'echo one'],
    ])
    // A prompt submitted and not yet run (nobody drives it here): its run is the active one.
    await host.submit({ sessionId: 's', inputId: 'i-2', prompt: 'two' })
    const queued = await hydrate('s')
    expect(queued.activeRun).toEqual({ runId: 's/input/i-2' })
    expect(queued.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect((await route.GET(new Request('http://app/chat?threadId=secret'))).status).toBe(403)
  })
})
