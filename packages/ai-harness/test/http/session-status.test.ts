import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool, type SessionStatus } from '@tanstack/ai-harness'
import { createHarnessHandler, type SessionView } from '@tanstack/ai-harness/http'
import { foldLog, type LogStatus, statusOf } from '@tanstack/ai-harness/log'
import { createManualClock, drain, scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

const empty = z.object({})

/** A harness whose model calls the tool the prompt names: `ask` asks a person, `nap` sleeps an hour, `none` answers at once. */
const harness = defineHarness({
  name: 'status',
  adapter: scriptedText(({ messages }) => {
    const last = messages.at(-1)
    if (last?.role !== 'user' || last.content === 'none') return 'Done.'
    return { toolCalls: [{ name: String(last.content), args: {} }] }
  }),
  tools: [
    durableTool(toolDefinition({ name: 'ask', description: 'Asks', inputSchema: empty }), async (_args, { step }) => {
      await step.ask({ name: 'ok', message: 'OK?', schema: z.object({ ok: z.boolean() }) })
      return 'asked'
    }),
    durableTool(toolDefinition({ name: 'nap', description: 'Sleeps', inputSchema: empty }), async (_args, { step }) => {
      await step.sleep('nap', 3_600_000)
      return 'slept'
    }),
  ],
})

async function world() {
  const clock = createManualClock(Date.UTC(2026, 0, 1))
  const store = memoryStore({ clock })
  const host = createHost({ store, harnesses: harness, clock, hostId: 'web' })
  const handler = createHarnessHandler({ host, authorize: () => true })
  const view = async (id: string) => (await (await handler(new Request(`http://x/sessions/${id}`))).json()) as SessionView
  /** What a session object that has just opened the session says; it lets the session go again. */
  const opened = async (id: string): Promise<SessionStatus> => {
    const session = await host.open({ sessionId: id })
    const { status } = session
    await session.close()
    return status
  }
  return { clock, store, host, view, opened }
}

describe('one status vocabulary (SessionStatus)', () => {
  it('the HTTP view, statusOf and a session object just opened say the same of each log', async () => {
    const w = await world()
    for (const [id, prompt] of [
      ['idle', 'none'],
      ['asking', 'ask'],
      ['napping', 'nap'],
    ] as const) {
      const session = await w.host.open({ sessionId: id })
      await drain(session.send(prompt))
      await session.close()
    }
    // A turn a crash cut: started, nothing after it (written as a host that died would leave it).
    await w.store.append('crashed', 1, [
      { type: 'harness.session.opened', harness: 'status', at: w.clock.now(), parent: null },
      {
        type: 'harness.turn.started',
        turnId: 't1',
        messages: [{ role: 'user', content: 'none' }],
        at: w.clock.now(),
        host: 'gone',
        fence: null,
      },
    ])
    const expected: Record<string, LogStatus> = { idle: 'idle', asking: 'parked', napping: 'parked', crashed: 'cut' }
    for (const [id, status] of Object.entries(expected)) {
      const view = await w.view(id)
      expect([id, view.status, statusOf(foldLog(await w.store.read(id)))]).toEqual([id, status, status])
      expect([id, await w.opened(id)]).toEqual([id, status])
    }
    expect((await w.view('asking')).parked).toEqual({ reason: 'ask', until: null })
    expect((await w.view('napping')).parked).toEqual({ reason: 'sleep', until: Date.UTC(2026, 0, 1) + 3_600_000 })
    expect((await w.view('crashed')).parked).toBeNull()
  })

  it("a session object's own statuses: running while its stream is read, parked once its run parked, closed once let go", async () => {
    const w = await world()
    const session = await w.host.open({ sessionId: 's' })
    expect(session.status).toBe('idle')
    const seen: SessionStatus[] = []
    for await (const _chunk of session.send('nap')) seen.push(session.status)
    expect(seen).toContain('running')
    expect(session.status).toBe('parked')
    await session.close()
    expect(session.status).toBe('closed')
  })
})
