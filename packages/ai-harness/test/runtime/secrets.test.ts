import { toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import { SECRET_MARKER, SecretScanner } from '@tanstack/ai-harness/log'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { dumpMemoryData } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createWorld, drain, recordsOf } from '../support/harness.js'

const API_KEY = 'sk_live_4fQ9xV2pL7aZ3mN8'
const DB_PASSWORD = 'pw-Zr8!kQ2#vN5@tY1'

describe('secrets of the session in tool results and streamed chunks', () => {
  it('never appear in tool results, streamed chunks, model requests or the store: a marker stands in their place', async () => {
    const world = createWorld()
    const useKey = durableTool(
      toolDefinition({ name: 'use_key', description: 'Calls an API with the key', inputSchema: z.object({}) }),
      async (_args, { secret }) => {
        const key = await secret('apiKey')
        return { header: `Bearer ${key}`, key }
      },
    )
    const connect = toolDefinition({ name: 'connect', description: 'Connects to the database', inputSchema: z.object({}) }).server(
      async (_args, context) => {
        const password = await (context as unknown as { secret: (name: string) => Promise<string> }).secret('dbPassword')
        throw new Error(`login refused for postgres://shop:${password}@db`)
      },
    )
    const adapter = scriptedText(({ messages }) =>
      messages[messages.length - 1]?.role === 'user'
        ? {
            toolCalls: [
              { name: 'use_key', args: {} },
              { name: 'connect', args: {} },
            ],
          }
        : `Your key is ${API_KEY} and the password is ${DB_PASSWORD}.`,
    )
    const harness = defineHarness({
      name: 'secrets',
      adapter,
      tools: [useKey, connect],
      resolveSecret: (name) => (name === 'dbPassword' ? DB_PASSWORD : undefined),
    })
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'secret', secrets: { apiKey: API_KEY } })
    const chunks = await drain(session.send('call the api'))
    const scanner = new SecretScanner([API_KEY, DB_PASSWORD])

    expect(scanner.find(chunks)).toBeNull()
    expect(JSON.stringify(chunks)).toContain(SECRET_MARKER)
    const entries = await session.entries()
    const results = new Map(recordsOf(entries, 'harness.tool.result').map((r) => [r.toolName, r]))
    expect(results.get('use_key')).toMatchObject({ ok: true, result: { header: `Bearer ${SECRET_MARKER}`, key: SECRET_MARKER } })
    expect(results.get('connect')).toMatchObject({ ok: false, result: { error: `login refused for postgres://shop:${SECRET_MARKER}@db` } })
    expect(scanner.find(adapter.requests)).toBeNull()
    expect(recordsOf(entries, 'harness.assistant').at(-1)?.text).toBe(`Your key is ${SECRET_MARKER} and the password is ${SECRET_MARKER}.`)
    expect(scanner.scanText(dumpMemoryData(world.data))).toBeNull()
  })

  it('a session secret that the model sends in tool-call arguments is replaced by the marker in the streamed chunks', async () => {
    const world = createWorld()
    const lookup = durableTool(
      toolDefinition({ name: 'lookup', description: 'Looks a key up', inputSchema: z.object({ key: z.string() }) }),
      async ({ key }) => ({ found: key.length > 0 }),
    )
    const adapter = scriptedText(({ messages }) =>
      messages[messages.length - 1]?.role === 'user' ? { toolCalls: [{ name: 'lookup', args: { key: API_KEY } }] } : 'Looked up.',
    )
    const harness = defineHarness({ name: 'secrets', adapter, tools: [lookup] })
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'args', secrets: { apiKey: API_KEY } })
    const chunks = await drain(session.send('look it up'))
    expect(chunks.some((c) => c.type === 'TOOL_CALL_ARGS')).toBe(true)
    expect(new SecretScanner([API_KEY]).find(chunks)).toBeNull()
  })

  it('a session secret in tool-call arguments is replaced by the marker in the log, while the call in flight gets the real value', async () => {
    const world = createWorld()
    const seen: string[] = []
    const lookup = durableTool(
      toolDefinition({ name: 'lookup', description: 'Looks a key up', inputSchema: z.object({ key: z.string() }) }),
      async ({ key }) => {
        seen.push(key)
        return { found: true }
      },
    )
    const adapter = scriptedText(({ messages }) =>
      messages[messages.length - 1]?.role === 'user' ? { toolCalls: [{ name: 'lookup', args: { key: API_KEY } }] } : 'Looked up.',
    )
    const harness = defineHarness({ name: 'secrets', adapter, tools: [lookup] })
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'args-log', secrets: { apiKey: API_KEY } })
    await drain(session.send('look it up'))
    expect(seen).toEqual([API_KEY])
    const call = (recordsOf(await session.entries(), 'harness.assistant')[0]?.toolCalls as Array<{ arguments: string }>)[0]
    expect(JSON.parse(call?.arguments ?? '{}')).toEqual({ key: SECRET_MARKER })
    expect(new SecretScanner([API_KEY]).scanText(dumpMemoryData(world.data))).toBeNull()
  })
})
