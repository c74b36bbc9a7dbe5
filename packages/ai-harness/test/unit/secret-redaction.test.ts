import { EventType, type StreamChunk } from '@tanstack/ai'
import { describe, expect, it } from 'vitest'
import { SECRET_MARKER, SecretScanner } from '../../src/log.js'
import { redactModelInput } from '../../src/secrets/model-input.js'
import { redactQuestionSchema } from '../../src/secrets/question-schema.js'
import { StreamRedactor } from '../../src/secrets/stream-redactor.js'

const SECRET = 'pa"ss\\wo rd/é1'
const scanner = new SecretScanner([SECRET])

function chop(text: string, size: number): string[] {
  const pieces: string[] = []
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size))
  return pieces
}

const deltas = (chunks: StreamChunk[], type: string) => chunks.filter((c) => c.type === type).map((c) => (c as { delta: string }).delta)

describe('StreamRedactor', () => {
  it('passes every event untouched when the session has no secrets', () => {
    const redactor = new StreamRedactor(new SecretScanner())
    const chunk = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm', delta: SECRET } as StreamChunk
    expect(redactor.push(chunk)).toEqual([chunk])
    expect(redactor.push(chunk)[0]).toBe(chunk)
  })

  it('a secret split across text pieces of any size never shows; the rest of the text arrives whole, before the end event', () => {
    const text = `Here: ${SECRET}, and again ${encodeURIComponent(SECRET)} and ${JSON.stringify(SECRET)}. Bye.`
    for (const size of [1, 2, 3, 5, 8, 13]) {
      const redactor = new StreamRedactor(scanner)
      const out: StreamChunk[] = []
      out.push(...redactor.push({ type: EventType.TEXT_MESSAGE_START, messageId: 'm', role: 'assistant' } as StreamChunk))
      for (const delta of chop(text, size)) {
        out.push(...redactor.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm', delta } as StreamChunk))
      }
      out.push(...redactor.push({ type: EventType.TEXT_MESSAGE_END, messageId: 'm' } as StreamChunk))
      expect(out.at(-1)?.type).toBe(EventType.TEXT_MESSAGE_END)
      expect(deltas(out, EventType.TEXT_MESSAGE_CONTENT).join('')).toBe(
        `Here: ${SECRET_MARKER}, and again ${SECRET_MARKER} and "${SECRET_MARKER}". Bye.`,
      )
      for (const delta of deltas(out, EventType.TEXT_MESSAGE_CONTENT)) expect(scanner.scanText(delta)).toBeNull()
      expect(scanner.find(out)).toBeNull()
    }
  })

  it("tool-call arguments streamed in pieces stay JSON once put together, with the secret's value replaced", () => {
    const args = JSON.stringify({ user: 'bob', password: SECRET, pin: 42 })
    const redactor = new StreamRedactor(scanner)
    const out: StreamChunk[] = []
    out.push(
      ...redactor.push({ type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'login', toolName: 'login' } as StreamChunk),
    )
    for (const delta of chop(args, 4))
      out.push(...redactor.push({ type: EventType.TOOL_CALL_ARGS, toolCallId: 'c1', delta } as StreamChunk))
    out.push(...redactor.push({ type: EventType.TOOL_CALL_END, toolCallId: 'c1', input: JSON.parse(args) } as unknown as StreamChunk))
    expect(JSON.parse(deltas(out, EventType.TOOL_CALL_ARGS).join(''))).toEqual({ user: 'bob', password: SECRET_MARKER, pin: 42 })
    expect(out[0]).toMatchObject({ type: EventType.TOOL_CALL_START, toolCallId: 'c1', toolCallName: 'login', toolName: 'login' })
    expect((out.at(-1) as unknown as { input: unknown }).input).toEqual({ user: 'bob', password: SECRET_MARKER, pin: 42 })
    expect(scanner.find(out)).toBeNull()
  })

  it('a run that ends gives out what is held back, first', () => {
    const redactor = new StreamRedactor(scanner)
    const out = [
      ...redactor.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm', delta: `so ${SECRET.slice(0, 5)}` } as StreamChunk),
      ...redactor.push({ type: EventType.RUN_FINISHED, runId: 'r', threadId: 't' } as StreamChunk),
    ]
    expect(out.map((c) => c.type)).toEqual([EventType.TEXT_MESSAGE_CONTENT, EventType.RUN_FINISHED])
    expect(deltas(out, EventType.TEXT_MESSAGE_CONTENT).join('')).toBe(`so ${SECRET.slice(0, 5)}`)
  })

  it('keeps ids, names, roles and types; cuts content; replaces a made-up id that holds the secret whole', () => {
    const word = new SecretScanner(['Carlsberg'])
    const redactor = new StreamRedactor(word)
    const event = {
      type: EventType.CUSTOM,
      name: 'harness.question',
      value: { sessionId: 's', questionId: 'call_1:size', toolCallId: 'call_1', name: 'size', message: 'Which Carlsberg?' },
    } as StreamChunk
    expect(redactor.redactEvent(event)).toEqual({
      ...event,
      value: { ...(event as { value: object }).value, message: `Which ${SECRET_MARKER}?` },
    })
    const madeUp = { type: EventType.TOOL_CALL_START, toolCallId: 'call_Carlsberg', toolCallName: 'order' } as StreamChunk
    expect(redactor.redactEvent(madeUp)).toEqual({ ...madeUp, toolCallId: SECRET_MARKER })
    const custom = { type: EventType.CUSTOM, name: 'progress', value: { toolCallId: 'x', step: 'Carlsberg' } } as StreamChunk
    expect(redactor.redactEvent(custom)).toEqual({ ...custom, value: { toolCallId: 'x', step: SECRET_MARKER } })
  })
})

describe('redactModelInput', () => {
  it('cuts secrets from every message and system prompt sent to the model, keeps roles, ids and tool names', () => {
    const config = {
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: null,
          toolCalls: [{ id: 'c1', type: 'function', function: { name: 'login', arguments: JSON.stringify({ p: SECRET }) } }],
        },
        { role: 'tool', toolCallId: 'c1', content: `refused for ${encodeURIComponent(SECRET)}` },
      ],
      systemPrompts: [`never say ${SECRET}`],
    }
    const out = redactModelInput(scanner, config, new Map())
    expect(out?.providerMessages).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'login', arguments: JSON.stringify({ p: SECRET_MARKER }) } }],
      },
      { role: 'tool', toolCallId: 'c1', content: `refused for ${SECRET_MARKER}` },
    ])
    expect(out?.systemPrompts).toEqual([`never say ${SECRET_MARKER}`])
    expect(out?.providerMessages[0]).toBe(config.messages[0])
    expect(redactModelInput(scanner, { messages: [{ role: 'user', content: 'clean' }] }, new Map())).toBeUndefined()
  })
})

describe('redactQuestionSchema', () => {
  const schema = (inner: Record<string, unknown>) => ({ type: 'object', properties: { answer: inner }, required: ['answer'] })

  it('cuts a secret out of descriptions, titles, examples and defaults', () => {
    const out = redactQuestionSchema(
      scanner,
      schema({ type: 'string', description: `not ${SECRET}`, title: SECRET, examples: [SECRET], default: SECRET }),
    )
    expect(out).toEqual({
      schema: schema({
        type: 'string',
        description: `not ${SECRET_MARKER}`,
        title: SECRET_MARKER,
        examples: [SECRET_MARKER],
        default: SECRET_MARKER,
      }),
    })
  })

  for (const [what, inner, path] of [
    ['an enum', { type: 'string', enum: ['a', SECRET] }, '$.properties.answer.enum'],
    ['a const', { const: SECRET }, '$.properties.answer.const'],
    ['a pattern', { type: 'string', pattern: `^${encodeURIComponent(SECRET)}$` }, '$.properties.answer.pattern'],
    ['a nested anyOf', { anyOf: [{ const: 1 }, { enum: [SECRET] }] }, '$.properties.answer.anyOf[1].enum'],
  ] as const) {
    it(`refuses a secret in ${what}, saying where`, () => {
      expect(redactQuestionSchema(scanner, schema(inner))).toEqual({ refusedAt: path })
    })
  }

  it('refuses a secret in a property name without printing it', () => {
    const out = redactQuestionSchema(scanner, { type: 'object', properties: { [SECRET]: { type: 'string' } } })
    expect(out).toEqual({ refusedAt: '$.properties["<key>"]' })
  })
})
