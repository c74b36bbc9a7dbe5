import { toolDefinition } from '@tanstack/ai'
import { createHost, defineHarness, durableTool } from '@tanstack/ai-harness'
import { type Authorize, createHarnessHandler, type HarnessAction } from '@tanstack/ai-harness/http'
import { createManualClock, drain, scriptedText } from '@tanstack/ai-harness/testing'
import { memoryStore } from '@tanstack/ai-harness-memory'
import { z } from 'zod'

/** A harness whose one tool asks a person to confirm a charge. */
export const asker = () =>
  defineHarness({
    name: 'asker',
    adapter: scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'Done.')),
    tools: [
      durableTool(toolDefinition({ name: 'confirm', description: 'Asks a person', inputSchema: z.object({}) }), async (_args, { step }) => {
        const answer = await step.ask({ name: 'amount', message: 'Charge 42 EUR?', schema: z.object({ ok: z.boolean() }) })
        return answer.ok ? 'charged' : 'not charged'
      }),
    ],
  })

export const BASE = 'http://inspector.test/api'

/** A host on a memory store with one session parked on a question, and a handler that records what authorize saw. */
export async function world(authorize: Authorize = () => true) {
  const clock = createManualClock(Date.UTC(2026, 0, 1))
  const store = memoryStore({ clock })
  const harness = asker()
  const host = createHost({ store, harnesses: harness, clock, hostId: 'web' })
  await drain((await host.open({ sessionId: 'order 7/a' })).send('pay'))
  const asked: Array<[HarnessAction, string | undefined]> = []
  const handler = createHarnessHandler({
    host,
    basePath: '/api',
    pollMs: 5,
    authorize: (request, action, sessionId) => {
      asked.push([action, sessionId])
      return authorize(request, action, sessionId)
    },
  })
  const call = (path: string, init?: RequestInit & { json?: unknown }) =>
    handler(
      new Request(`${BASE}${path}`, {
        ...init,
        ...(init?.json === undefined
          ? {}
          : { method: 'POST', body: JSON.stringify(init.json), headers: { 'content-type': 'application/json' } }),
      }),
    )
  return { store, host, harness, clock, handler, call, asked }
}

export const body = async (response: Response) => (await response.json()) as Record<string, unknown>
export const session = (id: string) => `/sessions/${encodeURIComponent(id)}`
