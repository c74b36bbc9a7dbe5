import { EventType, type StreamChunk, type TextOptions, toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, type Harness } from '@tanstack/ai-harness'
import { SECRET_MARKER, SecretScanner } from '@tanstack/ai-harness/log'
import { type Script, ScriptedTextAdapter, scriptedText } from '@tanstack/ai-harness/testing'
import { dumpMemoryData } from '@tanstack/ai-harness-memory'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { codeOf, createWorld, drain, recordsOf, type World } from '../support/harness.js'

const KEY = 'sk_live_4fQ9xV2pL7aZ3mN8'
/** A password with every character that JSON, URLs and forms write differently. */
const PASSWORD = 'Tr0ub4dor"\\ &!/3xyé'

/** A checker that looks deeper than the runtime needs to: raw store bytes nest JSON in JSON. */
const deep = (...secrets: string[]) => new SecretScanner(secrets, { depth: 6 })

/** A scripted model that streams every text and every tool call's arguments in pieces of `size` characters. */
class ChoppyAdapter extends ScriptedTextAdapter {
  constructor(
    script: Script,
    private readonly size = 3,
  ) {
    super(script)
  }

  override async *chatStream(options: TextOptions): AsyncGenerator<any> {
    for await (const chunk of super.chatStream(options)) {
      if ((chunk.type === EventType.TEXT_MESSAGE_CONTENT || chunk.type === EventType.TOOL_CALL_ARGS) && chunk.delta.length > this.size) {
        for (let at = 0; at < chunk.delta.length; at += this.size) yield { ...chunk, delta: chunk.delta.slice(at, at + this.size) }
      } else yield chunk
    }
  }
}

/** Everything the session let out: the stream, the model's requests, every byte of the store. */
function leaks(world: World, chunks: StreamChunk[], adapter: ScriptedTextAdapter, ...secrets: string[]) {
  const scanner = deep(...secrets)
  return {
    stream: scanner.find(chunks),
    model: scanner.find(adapter.requests),
    store: scanner.scanText(dumpMemoryData(world.data)),
  }
}

const NONE = { stream: null, model: null, store: null }

async function runOnce(harness: Harness, secrets: Record<string, string>, prompt = 'go') {
  const world = createWorld()
  const session = await world.start(harness, 'host-1').host.open({ sessionId: 's-1', secrets })
  const chunks = await drain(session.send(prompt))
  return { world, session, chunks, entries: await session.entries() }
}

describe('tool results: every form of a secret is cut out before the model, the stream or the log sees it', () => {
  it('form encoding (URLSearchParams), encodeURI, JSON escaping and a JSON number in a result', async () => {
    const pin = '4929173645'
    const tool = durableTool(
      toolDefinition({ name: 'login', description: 'Logs in', inputSchema: z.object({}) }),
      async (_args, { secret }) => {
        const password = await secret('password')
        const code = await secret('pin')
        return {
          body: new URLSearchParams({ user: 'bob', password }).toString(),
          url: encodeURI(`https://x.test/${password}`),
          raw: JSON.stringify({ password }),
          pin: Number(code),
        }
      },
    )
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'login', args: {} }] } : 'done',
    )
    const harness = defineHarness({ name: 'results', adapter, tools: [tool] })
    const { world, chunks, entries } = await runOnce(harness, { password: PASSWORD, pin })
    expect(leaks(world, chunks, adapter, PASSWORD, pin)).toEqual(NONE)
    const result = recordsOf(entries, 'harness.tool.result')[0]?.result as Record<string, unknown>
    expect(result.body).toBe(`user=bob&password=${SECRET_MARKER}`)
    expect(result.pin).toBe(SECRET_MARKER)
    expect(JSON.parse(String(result.raw))).toEqual({ password: SECRET_MARKER })
  })

  it("a tool error's message loses its secret, also JSON-escaped", async () => {
    const tool = toolDefinition({ name: 'connect', description: 'Connects', inputSchema: z.object({}) }).server(async (_args, context) => {
      const password = await (context as unknown as { secret: (n: string) => Promise<string> }).secret('password')
      throw new Error(`refused: ${JSON.stringify({ user: 'shop', password })}`)
    })
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'connect', args: {} }] } : 'sorry',
    )
    const harness = defineHarness({ name: 'errors', adapter, tools: [tool] })
    const { world, chunks, entries } = await runOnce(harness, { password: PASSWORD })
    expect(leaks(world, chunks, adapter, PASSWORD)).toEqual(NONE)
    expect(JSON.stringify(recordsOf(entries, 'harness.tool.result')[0]?.result)).toContain(SECRET_MARKER)
  })
})

describe('what the model writes: text and tool-call arguments, also streamed in small pieces', () => {
  it('a secret with a quote and a backslash in tool-call arguments is cut from the log, the stream and later model requests; the tool gets it', async () => {
    const seen: string[] = []
    const lookup = durableTool(
      toolDefinition({ name: 'lookup', description: 'Looks up', inputSchema: z.object({ key: z.string(), n: z.number() }) }),
      async ({ key }) => {
        seen.push(key)
        return { ok: true }
      },
    )
    const adapter = new ChoppyAdapter(({ messages }) =>
      messages.at(-1)?.role === 'user'
        ? { text: `Trying ${PASSWORD} now.`, toolCalls: [{ name: 'lookup', args: { key: PASSWORD, n: 1 } }] }
        : `It was ${encodeURIComponent(PASSWORD)}.`,
    )
    const harness = defineHarness({ name: 'args', adapter, tools: [lookup] })
    const { world, chunks, entries } = await runOnce(harness, { password: PASSWORD })
    expect(seen).toEqual([PASSWORD])
    expect(leaks(world, chunks, adapter, PASSWORD)).toEqual(NONE)
    const call = (recordsOf(entries, 'harness.assistant')[0]?.toolCalls as Array<{ arguments: string }>)[0]!
    expect(JSON.parse(call.arguments)).toEqual({ key: SECRET_MARKER, n: 1 })
    // The streamed arguments, put together, are still JSON; the streamed text still reads.
    const args = chunks.filter((c) => c.type === EventType.TOOL_CALL_ARGS).map((c) => (c as { delta: string }).delta)
    expect(args.length).toBeGreaterThan(1)
    expect(JSON.parse(args.join(''))).toEqual({ key: SECRET_MARKER, n: 1 })
    const text = chunks.filter((c) => c.type === EventType.TEXT_MESSAGE_CONTENT).map((c) => (c as { delta: string }).delta)
    expect(text.join('')).toBe(`Trying ${SECRET_MARKER} now.It was ${SECRET_MARKER}.`)
  })

  it("the model run's error loses its secret: in the stream and in the error the stream throws", async () => {
    const adapter = scriptedText(() => {
      throw new Error(`401 for key ${JSON.stringify(PASSWORD)}`)
    })
    const harness = defineHarness({ name: 'run-error', adapter })
    const world = createWorld()
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'e-1', secrets: { password: PASSWORD } })
    const chunks: StreamChunk[] = []
    let thrown: unknown
    try {
      for await (const chunk of session.send('go')) chunks.push(chunk)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(Error)
    expect((thrown as Error).message).toBe(`401 for key "${SECRET_MARKER}"`)
    expect(deep(PASSWORD).find([(thrown as Error).message, (thrown as Error).stack])).toBeNull()
    expect(leaks(world, chunks, adapter, PASSWORD)).toEqual(NONE)
  })
})

describe('a secret known only through resolveSecret', () => {
  const resolveSecret = (name: string) => (name === 'apiKey' ? KEY : undefined)

  it('after a restart, the model repeating a secret a tool read before is cut out, before any tool reads it again', async () => {
    const world = createWorld()
    const useKey = durableTool(
      toolDefinition({ name: 'use_key', description: 'Uses the key', inputSchema: z.object({}) }),
      async (_args, { secret }) => ((await secret('apiKey')).length > 0 ? 'used' : 'none'),
    )
    const echo = durableTool(
      toolDefinition({ name: 'echo', description: 'Echoes', inputSchema: z.object({ text: z.string() }) }),
      async ({ text }) => text.length,
    )
    const adapter = scriptedText(({ messages }) => {
      const last = messages.at(-1)
      if (last?.role === 'user' && last.content === 'first') return { toolCalls: [{ name: 'use_key', args: {} }] }
      if (last?.role === 'user') return { toolCalls: [{ name: 'echo', args: { text: `key=${KEY}` } }] }
      return `ok ${Buffer.from(KEY).toString('base64')}`
    })
    const harness = defineHarness({ name: 'resolve', adapter, tools: [useKey, echo], resolveSecret })
    const first = await world.start(harness, 'host-1').host.open({ sessionId: 'r-1' })
    const chunks = await drain(first.send('first'))
    await first.close()
    const logged = recordsOf(await world.read('r-1'), 'harness.secret.used')
    expect(logged).toEqual([{ type: 'harness.secret.used', name: 'apiKey' }])
    // Another process: the scanner has not seen the key in this process; the log names it.
    const second = await world.start(harness, 'host-2').host.open({ sessionId: 'r-1' })
    chunks.push(...(await drain(second.send('second'))))
    expect(leaks(world, chunks, adapter, KEY)).toEqual(NONE)
    const call = recordsOf(await world.read('r-1'), 'harness.assistant').at(-2)?.toolCalls as Array<{ arguments: string }>
    expect(JSON.parse(call[0]!.arguments)).toEqual({ text: `key=${SECRET_MARKER}` })
  })

  it('a secret named in secretNames is known from the first turn, before any tool reads it', async () => {
    const echo = durableTool(
      toolDefinition({ name: 'echo', description: 'Echoes', inputSchema: z.object({ text: z.string() }) }),
      async ({ text }) => text.length,
    )
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'echo', args: { text: KEY } }] } : `bye ${KEY}`,
    )
    const harness = defineHarness({ name: 'listed', adapter, tools: [echo], resolveSecret, secretNames: ['apiKey'] })
    const { world, chunks } = await runOnce(harness, {})
    expect(leaks(world, chunks, adapter, KEY)).toEqual(NONE)
  })

  it('a session whose secret can no longer be resolved refuses to open (SECRET_NOT_FOUND) and writes nothing', async () => {
    const world = createWorld()
    const useKey = durableTool(
      toolDefinition({ name: 'use_key', description: 'Uses the key', inputSchema: z.object({}) }),
      async (_args, { secret }) => ((await secret('apiKey')).length > 0 ? 'used' : 'none'),
    )
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'use_key', args: {} }] } : 'ok',
    )
    const withKey = defineHarness({ name: 'gone', adapter, tools: [useKey] })
    const first = await world.start(withKey, 'host-1').host.open({ sessionId: 'g-1', secrets: { apiKey: KEY } })
    await drain(first.send('go'))
    await first.close()
    const before = (await world.read('g-1')).length
    expect(await codeOf(() => world.start(withKey, 'host-2').host.open({ sessionId: 'g-1' }))).toBe('SECRET_NOT_FOUND')
    expect((await world.read('g-1')).length).toBe(before)
    // With the secret given again, it opens.
    const again = await world.start(withKey, 'host-3').host.open({ sessionId: 'g-1', secrets: { apiKey: KEY } })
    await again.close()
  })
})

describe('names and questions: structure is refused before anything runs, text for people is cut', () => {
  it('a step or sleep name holding a secret is refused before fn runs, and nothing is written', async () => {
    const codes: string[] = []
    let ran = 0
    const tool = durableTool(
      toolDefinition({ name: 'named', description: 'Names steps', inputSchema: z.object({}) }),
      async (_args, { step, secret }) => {
        const key = await secret('apiKey')
        for (const name of [`charge:${key}`, `charge:${encodeURIComponent(PASSWORD)}`, `x:${Buffer.from(key).toString('hex')}`]) {
          codes.push(
            await codeOf(() =>
              step.do(name, () => {
                ran++
                return 1
              }),
            ),
          )
        }
        codes.push(await codeOf(() => step.sleep(`wait:${key}`, 1)))
        return 'done'
      },
    )
    const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'named', args: {} }] } : 'ok'))
    const harness = defineHarness({ name: 'names', adapter, tools: [tool] })
    const { world, chunks, entries } = await runOnce(harness, { apiKey: KEY, password: PASSWORD })
    expect(codes).toEqual(['STEP_SECRET', 'STEP_SECRET', 'STEP_SECRET', 'STEP_SECRET'])
    expect(ran).toBe(0)
    expect(recordsOf(entries, 'harness.step')).toEqual([])
    expect(recordsOf(entries, 'harness.sleep')).toEqual([])
    expect(leaks(world, chunks, adapter, KEY, PASSWORD)).toEqual(NONE)
  })

  it('step.ask: a secret in a description or the message is cut; in an enum it is refused before anything is written', async () => {
    const codes: string[] = []
    const tool = durableTool(
      toolDefinition({ name: 'confirm', description: 'Asks', inputSchema: z.object({}) }),
      async (_args, { step, secret }) => {
        const key = await secret('apiKey')
        codes.push(await codeOf(() => step.ask({ name: 'pick', message: 'Pick one', schema: z.object({ choice: z.enum(['a', key]) }) })))
        await step.ask({
          name: 'ok',
          message: `Use key ${JSON.stringify(key)}?`,
          schema: z.object({ yes: z.boolean().describe(`Say yes to use ${key}`) }),
        })
        return 'asked'
      },
    )
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'ok',
    )
    const harness = defineHarness({ name: 'asks', adapter, tools: [tool] })
    const { world, chunks, entries } = await runOnce(harness, { apiKey: KEY })
    expect(codes).toEqual(['STEP_SECRET'])
    const asks = recordsOf(entries, 'harness.ask')
    expect(asks.map((a) => a.name)).toEqual(['ok'])
    expect(asks[0]?.message).toBe(`Use key "${SECRET_MARKER}"?`)
    expect(JSON.stringify(asks[0]?.schema)).toContain(`Say yes to use ${SECRET_MARKER}`)
    const question = chunks.find((c) => c.type === EventType.CUSTOM && (c as { name: string }).name === 'harness.question')
    expect((question as { value: { message: string } }).value.message).toBe(`Use key "${SECRET_MARKER}"?`)
    expect(leaks(world, chunks, adapter, KEY)).toEqual(NONE)
  })

  it('session.cancel(reason) keeps the reason without its secret', async () => {
    const tool = durableTool(toolDefinition({ name: 'wait', description: 'Waits', inputSchema: z.object({}) }), async (_args, { step }) =>
      step.ask({ name: 'go', message: 'Go?', schema: z.object({ go: z.boolean() }) }),
    )
    const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'wait', args: {} }] } : 'ok'))
    const harness = defineHarness({ name: 'cancel', adapter, tools: [tool] })
    const { world, chunks } = await runOnce(harness, { apiKey: KEY })
    const again = await world.start(harness, 'host-2').host.open({ sessionId: 's-1', secrets: { apiKey: KEY } })
    await again.cancel(`user pasted ${encodeURIComponent(KEY)} by mistake`)
    const cancelled = recordsOf(await world.read('s-1'), 'harness.turn.cancelled')[0]
    expect(cancelled?.reason).toBe(`user pasted ${SECRET_MARKER} by mistake`)
    expect(leaks(world, chunks, adapter, KEY)).toEqual(NONE)
  })
})

describe('refusals never print the secret', () => {
  it('a step value or a record that is not JSON under a key holding the secret: the error names the path without it', async () => {
    const errors: Array<{ code?: string; message: string; path?: string }> = []
    const tool = durableTool(
      toolDefinition({ name: 'keys', description: 'Keys', inputSchema: z.object({}) }),
      async (_args, { step, append, secret }) => {
        const key = await secret('apiKey')
        for (const run of [
          () => step.do('v', () => ({ [key]: new Date() }) as never),
          async () => append([{ type: 'app.x', [key]: new Map() } as never]),
        ]) {
          try {
            await run()
          } catch (error) {
            errors.push(error as never)
          }
        }
        return 'done'
      },
    )
    const adapter = scriptedText(({ messages }) => (messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'keys', args: {} }] } : 'ok'))
    const harness = defineHarness({ name: 'keys', adapter, tools: [tool] })
    await runOnce(harness, { apiKey: KEY })
    expect(errors.map((e) => e.code)).toEqual(['STEP_NOT_JSON', 'RECORD_NOT_JSON'])
    expect(deep(KEY).find(errors.map((e) => [e.message, e.path]))).toBeNull()
    expect(errors.every((e) => e.message.includes(SECRET_MARKER))).toBe(true)
  })
})

describe('answers', () => {
  it('host.answer refuses an answer that holds a secret the harness can resolve, and writes nothing', async () => {
    const tool = durableTool(
      toolDefinition({ name: 'confirm', description: 'Asks', inputSchema: z.object({}) }),
      async (_args, { step, secret }) => {
        await secret('apiKey')
        const { note } = await step.ask({ name: 'note', message: 'Any note?', schema: z.object({ note: z.string() }) })
        return note
      },
    )
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'confirm', args: {} }] } : 'ok',
    )
    const harness = defineHarness({
      name: 'answers',
      adapter,
      tools: [tool],
      resolveSecret: (name) => (name === 'apiKey' ? KEY : undefined),
    })
    const world = createWorld()
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'a-1' })
    const chunks = await drain(session.send('go'))
    const question = chunks.find((c) => c.type === EventType.CUSTOM && (c as { name: string }).name === 'harness.question') as {
      value: { questionId: string }
    }
    const other = world.start(harness, 'host-2').host
    const before = (await world.read('a-1')).length
    const leaked = {
      sessionId: 'a-1',
      questionId: question.value.questionId,
      answer: { note: `key ${Buffer.from(KEY).toString('base64')}` },
    }
    expect(await codeOf(() => other.answer(leaked))).toBe('RECORD_SECRET')
    expect((await world.read('a-1')).length).toBe(before)
    await other.answer({ sessionId: 'a-1', questionId: question.value.questionId, answer: { note: 'all good' } })
    expect(leaks(world, chunks, adapter, KEY)).toEqual(NONE)
  })
})

describe('the store guard: what no scan point could cut is refused, not logged', () => {
  it('a tool-call id the model made from a secret stops the turn with RECORD_SECRET; neither the log nor the stream keeps it', async () => {
    const echo = durableTool(toolDefinition({ name: 'echo', description: 'Echoes', inputSchema: z.object({}) }), async () => 'echo')
    const adapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'echo', args: {}, id: `call_${KEY}` }] } : 'ok',
    )
    const harness = defineHarness({ name: 'guard', adapter, tools: [echo] })
    const world = createWorld()
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'g-1', secrets: { apiKey: KEY } })
    const chunks: StreamChunk[] = []
    const code = await codeOf(async () => {
      for await (const chunk of session.send('go')) chunks.push(chunk)
    })
    expect(code).toBe('RECORD_SECRET')
    expect(recordsOf(await world.read('g-1'), 'harness.assistant')).toEqual([])
    expect(leaks(world, chunks, adapter, KEY).stream).toBeNull()
    expect(leaks(world, chunks, adapter, KEY).store).toBeNull()
  })
})
