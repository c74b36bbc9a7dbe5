import { EventType, type StreamChunk, toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool } from '@tanstack/ai-harness'
import { SECRET_MARKER, SecretScanner } from '@tanstack/ai-harness/log'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { HARNESS_RECORD_TYPES } from '../../src/runtime/record-types.js'
import { FIXED_STRUCTURE } from '../../src/secrets/structure.js'
import { codeOf, createWorld, drain, recordsOf } from '../support/harness.js'

/** A secret that is also an ordinary word: it shows up in text, never in ids or names. */
const WORD = 'Carlsberg'

function beerHarness(name = 'pub') {
  const orderBeer = durableTool(
    toolDefinition({ name: 'order_beer', description: 'Orders a beer', inputSchema: z.object({ brand: z.string() }) }),
    async ({ brand }, { step }) => {
      const size = await step.ask({
        name: 'size',
        message: `Which size of ${brand}?`,
        schema: z.object({ size: z.enum(['small', 'large']).describe(`Size of the ${brand}`) }),
      })
      const order = await step.do('order', () => ({ orderId: 'o-1', size: size.size }))
      return `Ordered a ${order.size} ${brand} (${order.orderId}).`
    },
  )
  const adapter = scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user'
      ? { text: `One ${WORD}, coming.`, toolCalls: [{ id: 'call_1', name: 'order_beer', args: { brand: WORD } }] }
      : `Enjoy your ${WORD}.`,
  )
  return { harness: defineHarness({ name, adapter, tools: [orderBeer] }), adapter }
}

/** The parts of each event a client follows the stream by. Pieces of a text count once: how a text is cut into pieces may change. */
function structureOf(chunks: readonly StreamChunk[]) {
  const pieces = new Set<string>([EventType.TEXT_MESSAGE_CONTENT, EventType.TOOL_CALL_ARGS])
  const once = chunks.filter((chunk, i) => !pieces.has(chunk.type) || chunks[i - 1]?.type !== chunk.type)
  return once.map((chunk) => {
    const c = chunk as Record<string, unknown>
    const value = c.value as Record<string, unknown> | undefined
    return {
      type: c.type,
      name: c.name,
      role: c.role,
      threadId: c.threadId,
      toolCallId: c.toolCallId,
      toolCallName: c.toolCallName,
      questionId: value?.questionId,
      sessionId: value?.sessionId,
      valueToolCallId: value?.toolCallId,
    }
  })
}

describe('20.5: redaction cuts secrets out of content, never out of structure', () => {
  it('with a secret that is an ordinary word, ids, names, roles and event types stay, and the question from the stream is answered', async () => {
    const plain = beerHarness()
    const plainWorld = createWorld()
    const plainChunks = await drain((await plainWorld.start(plain.harness, 'host-1').host.open({ sessionId: 'pub-1' })).send('a beer'))

    const { harness, adapter } = beerHarness()
    const world = createWorld()
    const host = world.start(harness, 'host-1').host
    const session = await host.open({ sessionId: 'pub-1', secrets: { favourite: WORD } })
    const chunks = await drain(session.send('a beer'))

    expect(structureOf(chunks)).toEqual(structureOf(plainChunks))
    const question = chunks.find((c) => c.type === EventType.CUSTOM && (c as { name: string }).name === 'harness.question') as {
      value: { sessionId: string; questionId: string; message: string; schema: unknown }
    }
    expect(question.value).toMatchObject({ sessionId: 'pub-1', questionId: 'call_1:size', message: `Which size of ${SECRET_MARKER}?` })
    expect(JSON.stringify(question.value.schema)).toContain(`Size of the ${SECRET_MARKER}`)

    // Answered from another host with what the event said, the call goes on.
    await world
      .start(harness, 'host-2')
      .host.answer({ sessionId: question.value.sessionId, questionId: question.value.questionId, answer: { size: 'large' } })
    const resumed = await world.start(harness, 'host-3').host.open({ sessionId: 'pub-1', secrets: { favourite: WORD } })
    const after = await drain(resumed.resume())
    const result = recordsOf(await resumed.entries(), 'harness.tool.result')[0]
    expect(result).toMatchObject({
      toolCallId: 'call_1',
      toolName: 'order_beer',
      ok: true,
      result: `Ordered a large ${SECRET_MARKER} (o-1).`,
    })
    const scanner = new SecretScanner([WORD])
    expect(scanner.find([...chunks, ...after])).toBeNull()
    expect(scanner.find(adapter.requests)).toBeNull()
  })

  const ambiguous: Array<[string, string, { sessionId?: string; harnessName?: string; hostId?: string }]> = [
    ['a tool name', 'order_beer', {}],
    ['a part of a tool name', 'rder_bee', {}],
    ['the harness name', 'the-pub-42', { harnessName: 'the-pub-42' }],
    ['a part of the session id', 'table-0017', { sessionId: 'pub/table-0017/tab' }],
    ['the host id', 'bar-host-7', { hostId: 'bar-host-7' }],
    ["the adapter's model name", 'scripted', {}],
    ['a role', 'assistant', {}],
    ['an event type', 'TOOL_CALL_ARGS', {}],
    ['a field name', 'toolCallId', {}],
    ['a custom event name', 'harness.question', {}],
    ['a record type', 'harness.tool.result', {}],
    ['a JSON Schema keyword', 'additionalProperties', {}],
    ['the marker itself', SECRET_MARKER, {}],
  ]
  for (const [what, secret, where] of ambiguous) {
    it(`a secret that occurs in ${what} is refused when the session opens (SECRET_AMBIGUOUS), and nothing is written`, async () => {
      const { harness } = beerHarness(where.harnessName)
      const world = createWorld()
      const sessionId = where.sessionId ?? 'pub-2'
      const host = world.start(harness, where.hostId ?? 'host-1').host
      const error = await host.open({ sessionId, secrets: { word: secret } }).then(
        () => undefined,
        (caught: unknown) => caught as Error & { code: string },
      )
      expect(error?.code).toBe('SECRET_AMBIGUOUS')
      expect(error?.message).toContain('"word"')
      expect(error?.message).not.toContain(secret)
      expect(await world.read(sessionId)).toEqual([])
      // The refused open let the session go: another host opens it at once.
      const other = await world.start(harness, 'host-9').host.open({ sessionId })
      await other.close()
    })
  }

  it('a secret a tool reads that occurs in structure is refused then, as a tool error', async () => {
    const reader = toolDefinition({ name: 'read_it', description: 'Reads a secret', inputSchema: z.object({}) }).server(
      async (_args, context) => (context as unknown as { secret: (n: string) => Promise<string> }).secret('word'),
    )
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'read_it', args: {} }] } : 'ok',
    )
    const harness = defineHarness({ name: 'pub', adapter, tools: [reader], resolveSecret: () => 'toolCallId' })
    const world = createWorld()
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'pub-3' })
    await drain(session.send('go'))
    const result = recordsOf(await session.entries(), 'harness.tool.result')[0]
    expect(result?.ok).toBe(false)
    expect(String((result?.result as { error: string }).error)).toContain('occurs in')
  })
})

describe('the words the harness writes as structure are all known, so an ambiguous secret is refused up front', () => {
  /** Record types and field names of harness records, and the structural parts of stream events. */
  function structuralWords(records: readonly LogRecord[], chunks: readonly StreamChunk[]): Set<string> {
    const words = new Set<string>()
    const content = new Set(['result', 'value', 'answer', 'schema', 'messages', 'input', 'rawEvent', 'usage', 'content', 'arguments'])
    const walk = (node: unknown, depth: number) => {
      if (typeof node !== 'object' || node === null || depth > 3) return
      if (Array.isArray(node)) {
        for (const item of node) walk(item, depth + 1)
        return
      }
      for (const [key, inner] of Object.entries(node)) {
        words.add(key)
        if (!content.has(key)) walk(inner, depth + 1)
      }
    }
    for (const record of records) {
      if (!String(record.type).startsWith('harness.')) continue
      words.add(String(record.type))
      walk(record, 0)
    }
    for (const chunk of chunks) {
      const c = chunk as Record<string, unknown>
      words.add(String(c.type))
      if (c.role !== undefined) words.add(String(c.role))
      if (c.type === EventType.CUSTOM) words.add(String(c.name))
      walk(chunk, 0)
    }
    return words
  }

  it('every record type, field, event type, role and event name of a full session is in the list', async () => {
    const orderBeer = beerHarness().harness.tools[0]!
    const nap = durableTool(
      toolDefinition({ name: 'nap', description: 'Naps', inputSchema: z.object({}) }),
      async (_args, { step, secret, append }) => {
        await secret('token')
        await step.do('flaky', { attempts: 2, delayMs: 0 }, ({ attempt }) => {
          if (attempt === 1) throw new Error('flaky')
        })
        await step.sleep('nap', 1)
        append([{ type: 'app.note', text: 'napped' }])
        throw new Error('woke up grumpy')
      },
    )
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user'
        ? {
            text: 'Both.',
            toolCalls: [
              { name: 'nap', args: {} },
              { name: 'order_beer', args: { brand: 'Tuborg' } },
              { name: 'missing', args: {} },
            ],
          }
        : 'Done.',
    )
    const harness = defineHarness({ name: 'pub', adapter, tools: [orderBeer, nap], resolveSecret: () => 'a-real-token-0001' })
    const world = createWorld()
    const host = world.start(harness, 'host-1').host
    const session = await host.open({ sessionId: 'pub-4' })
    const chunks = await drain(session.send('a beer'))
    const question = chunks.find((c) => c.type === EventType.CUSTOM && (c as { name: string }).name === 'harness.question') as {
      value: { questionId: string }
    }
    await host.answer({ sessionId: 'pub-4', questionId: question.value.questionId, answer: { size: 'small' } })
    const again = await host.open({ sessionId: 'pub-4' })
    chunks.push(...(await drain(again.resume())))
    chunks.push(...(await drain(again.send('again'))))
    await again.cancel('done')
    const records = (await again.entries()).map((e) => e.record)
    expect(new Set(records.map((r) => r.type))).toEqual(
      new Set([
        'harness.session.opened',
        'harness.turn.started',
        'harness.assistant',
        'harness.secret.used',
        'harness.sleep',
        'harness.tool.result',
        'app.note',
        'harness.ask',
        'harness.parked',
        'harness.answer',
        'harness.turn.resumed',
        'harness.step',
        'harness.step.failed',
        'harness.step.started',
        'harness.turn.finished',
        'harness.turn.cancelled',
      ]),
    )
    const missing = [...structuralWords(records, chunks)].filter((word) => !FIXED_STRUCTURE.includes(word))
    expect(missing).toEqual([])
    expect(await codeOf(() => host.open({ sessionId: 'pub-5', secrets: { w: 'notStarted' } }))).toBe('SECRET_AMBIGUOUS')
  })

  it('counts every record type the harness writes as structure, so a secret equal to one is refused when the session opens', async () => {
    expect(HARNESS_RECORD_TYPES.filter((type) => !FIXED_STRUCTURE.includes(type))).toEqual([])
    const harness = defineHarness({ name: 'types', adapter: scriptedText(['Done.']), tools: [] })
    const host = createWorld().start(harness, 'host-1').host
    for (const type of ['harness.rollback', 'harness.step.intent']) {
      expect(await codeOf(() => host.open({ sessionId: 'types-1', secrets: { w: type } })), type).toBe('SECRET_AMBIGUOUS')
    }
  })
})
