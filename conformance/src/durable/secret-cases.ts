import assert from 'node:assert/strict'
import { EventType, type StreamChunk, type TextOptions, toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, HARNESS_EVENTS } from '@tanstack/ai-harness'
import { SECRET_MARKER, SecretScanner } from '@tanstack/ai-harness/log'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { recordsOf, type Script, ScriptedTextAdapter, SECRET_FORMS, TEST_LEASE_MS } from '@tanstack/ai-harness/testing'
import { z } from 'zod'
import { defineCase } from '../case.js'
import { assertWellFormed, drain, runUntilCrash, startCaseMachine } from './fixtures.js'

/** Given when the session opens: quotes, a backslash, a slash, a space, +, % and non-ASCII. */
const API_KEY = 'sk_live_9f"Q2\\x V/7+p%L0é'
/** A numeric secret, returned as a JSON number. */
const PIN = '4929173645'
/** Known only through resolveSecret: a tool reads it, the process crashes, the model repeats it. */
const DB_PASSWORD = 'Tr0ub4dor&3!xyz ü'

/** Every form of a secret, one per line. */
const everyForm = (secret: string) => SECRET_FORMS.map((form) => `${form.name}: ${form.encode(secret)}`).join('\n')

/** A scripted model that streams texts and tool-call arguments in pieces of eleven characters, as real models do (every secret is longer). */
class ChoppyModel extends ScriptedTextAdapter {
  override async *chatStream(options: TextOptions): AsyncGenerator<any> {
    for await (const chunk of super.chatStream(options)) {
      const splits = chunk.type === EventType.TEXT_MESSAGE_CONTENT || chunk.type === EventType.TOOL_CALL_ARGS
      if (!splits) {
        yield chunk
        continue
      }
      for (let at = 0; at < chunk.delta.length; at += 11) yield { ...chunk, delta: chunk.delta.slice(at, at + 11) }
    }
  }
}

/** What the model says next, from the tool results and prompts it has seen. */
const script: Script = ({ messages }) => {
  const last = messages.at(-1)
  const called = (name: string) => messages.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.function.name === name))
  if (last?.role === 'user' && last.content === 'again') return { toolCalls: [{ name: 'confirm', args: {} }] }
  if (last?.role === 'user') {
    return {
      text: `Using your key:\n${everyForm(API_KEY)}`,
      toolCalls: [
        { name: 'leak', args: { forms: everyForm(API_KEY), pin: Number(PIN) } },
        { name: 'vault', args: {} },
      ],
    }
  }
  if (!called('echo')) {
    // After the restart: the model repeats the password before any tool of this process read it.
    return {
      text: `The password was:\n${everyForm(DB_PASSWORD)}`,
      toolCalls: [
        { name: 'echo', args: { text: everyForm(DB_PASSWORD), pin: Number(PIN), [DB_PASSWORD]: true } },
        { name: 'confirm', args: {} },
      ],
    }
  }
  return `Done with ${everyForm(API_KEY)}\n${everyForm(DB_PASSWORD)}\n${PIN}`
}

export const secretCases = [
  defineCase({
    id: 'durable.secrets.every-form',
    title:
      'no secret of a session, in any form the harness recognises, reaches a byte of the store, the stream or the model: results, arguments, names, schemas, errors, cancel reasons, also a secret known only through resolveSecret after a crash',
    requires: ['dump', 'leases'],
    async run(context) {
      const attempts: string[] = []
      const attempt = async (what: string, run: () => unknown) => {
        try {
          await run()
          attempts.push(`${what}:accepted`)
        } catch (error) {
          attempts.push(`${what}:${String((error as { code?: unknown }).code)}`)
        }
      }
      const leak = durableTool(
        toolDefinition({ name: 'leak', description: 'Leaks what it can', inputSchema: z.object({ forms: z.string(), pin: z.number() }) }),
        async (_args, { step, append, secret }) => {
          const key = await secret('apiKey')
          const pin = await secret('pin')
          for (const [i, form] of SECRET_FORMS.entries()) {
            const text = form.encode(key)
            await attempt(`value ${form.name}`, () => step.do(`value:${i}`, () => ({ text })))
            await attempt(`name ${form.name}`, () => step.do(`name:${text}`, () => 1))
            await attempt(`sleep ${form.name}`, () => step.sleep(`nap:${text}`, 1))
            await attempt(`enum ${form.name}`, () =>
              step.ask({ name: `enum:${i}`, message: 'Pick', schema: z.object({ v: z.enum(['a', text]) }) }),
            )
            await attempt(`record ${form.name}`, () => append([{ type: 'app.leak', text }]))
          }
          await attempt('value pin', () => step.do('pin', () => ({ pin: Number(pin) })))
          await step.do('charge', () => ({ chargeId: 'ch_secret_case' }))
          return { every: everyForm(key), pin: Number(pin), forms: Object.fromEntries(SECRET_FORMS.map((f) => [f.name, f.encode(key)])) }
        },
      )
      const vault = toolDefinition({ name: 'vault', description: 'Opens the vault', inputSchema: z.object({}) }).server(
        async (_args, ctx) => {
          const password = await (ctx as unknown as { secret: (name: string) => Promise<string> }).secret('dbPassword')
          throw new Error(`login refused:\n${everyForm(password)}`)
        },
      )
      const echo = durableTool(
        toolDefinition({ name: 'echo', description: 'Echoes', inputSchema: z.object({ text: z.string() }).passthrough() }),
        async ({ text }) => `${text.length} characters`,
      )
      const confirm = durableTool(
        toolDefinition({ name: 'confirm', description: 'Asks', inputSchema: z.object({}) }),
        async (_a, { step, secret }) => {
          const password = await secret('dbPassword')
          const key = await secret('apiKey')
          const { ok } = await step.ask({
            name: 'ok',
            message: `Go on with\n${everyForm(key)}\n${everyForm(password)}?`,
            schema: z.object({ ok: z.boolean().describe(`Say yes to use\n${everyForm(password)}`) }),
          })
          return ok ? 'confirmed' : 'declined'
        },
      )
      const model = new ChoppyModel(script)
      const harness = defineHarness({
        name: 'secrets',
        adapter: model,
        tools: [leak, vault, echo, confirm],
        resolveSecret: (name) => (name === 'dbPassword' ? DB_PASSWORD : undefined),
      })
      const given = { apiKey: API_KEY, pin: PIN }
      const chunks: StreamChunk[] = []

      // Process 1 crashes right after the log names the password a tool read.
      const first = await startCaseMachine(context, harness, 'host-1')
      first.store.crashOnAppend((records) => records.some((r) => r.type === 'harness.secret.used' && r.name === 'dbPassword'), 'after')
      const session = await first.host.open({ sessionId: 'secret-forms', secrets: given })
      const firstRun = session.send('start')
      const collected = (async function* () {
        for await (const chunk of firstRun) {
          chunks.push(chunk)
          yield chunk
        }
      })()
      await runUntilCrash(first, collected, 'the first run')

      // Process 2 knows the password only from the log's name and resolveSecret.
      context.clock.advance(TEST_LEASE_MS + 1)
      const second = await startCaseMachine(context, harness, 'host-2')
      const resumed = await second.host.open({ sessionId: 'secret-forms', secrets: given })
      chunks.push(...(await drain(resumed.resume())))
      const question = chunks.find((c) => c.type === EventType.CUSTOM && (c as { name?: string }).name === HARNESS_EVENTS.question) as
        | { value: { sessionId: string; questionId: string } }
        | undefined
      assert.ok(question, 'the question event is in the stream')
      const third = await startCaseMachine(context, harness, 'host-3')
      await third.host.answer({ sessionId: question.value.sessionId, questionId: question.value.questionId, answer: { ok: true } })
      await resumed.close()
      const after = await second.host.open({ sessionId: 'secret-forms', secrets: given })
      chunks.push(...(await drain(after.resume())))
      chunks.push(...(await drain(after.send('again'))))
      await after.cancel(`cancelled, as the user pasted\n${everyForm(DB_PASSWORD)}\n${everyForm(API_KEY)}`)

      // Every refusal happened, on both runs of the durable tool that leaked.
      const refused = attempts.filter((a) => !a.endsWith(':STEP_SECRET') && !a.endsWith(':RECORD_SECRET'))
      assert.deepEqual(refused, [], 'every step value, name, sleep, enum and record holding the secret is refused')
      assert.ok(attempts.length >= SECRET_FORMS.length * 5, 'the leaking tool tried every form')

      const entries = await after.entries()
      assertWellFormed(entries)
      const types = new Set(entries.map((e) => e.record.type))
      for (const type of ['harness.secret.used', 'harness.ask', 'harness.answer', 'harness.turn.cancelled', 'harness.tool.result']) {
        assert.ok(types.has(type), `the session logged a ${type} record`)
      }
      const result = (name: string) => recordsOf(entries, 'harness.tool.result').find((r: LogRecord) => r.toolName === name)
      assert.equal(result('leak')?.ok, true, 'the leaking tool finished, its result redacted')
      assert.equal((result('leak')?.result as { pin?: unknown }).pin, SECRET_MARKER, 'a numeric secret became the marker')
      assert.equal(result('confirm')?.result, 'confirmed', 'the question from the stream was answered')

      // Nothing holds any secret in any form: the raw store, the stream, what the model was sent, errors.
      const scanner = new SecretScanner([API_KEY, PIN, DB_PASSWORD], { depth: 6 })
      const raw = await context.dump()
      assert.ok(raw.includes('ch_secret_case') && raw.includes(SECRET_MARKER), 'the dump holds the session')
      assert.equal(scanner.scanText(raw), null, 'the raw store holds no secret in any form')
      assert.equal(scanner.find(chunks), null, 'the stream holds no secret in any form')
      assert.equal(scanner.find(model.requests), null, 'the model was sent no secret in any form')
      assert.ok(JSON.stringify(chunks).includes(SECRET_MARKER), 'the stream shows the marker where a secret was')
      await after.close()
    },
  }),
]
