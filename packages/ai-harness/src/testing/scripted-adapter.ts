import { EventType, type ModelMessage, type TextOptions } from '@tanstack/ai'
import { BaseTextAdapter, type StructuredOutputOptions, type StructuredOutputResult } from '@tanstack/ai/adapters'

/** One tool call the scripted model makes. */
export interface ScriptedToolCall {
  name: string
  args: Record<string, unknown>
  /** Default: a fresh random id, as a real model would give. */
  id?: string
}

/** What the scripted model answers: text, tool calls, or both. */
export type ScriptedReply = string | { text?: string; toolCalls?: ScriptedToolCall[] }

export interface ScriptInput {
  /** The conversation the model is asked to continue. */
  readonly messages: ReadonlyArray<ModelMessage>
  /** How many times this adapter answered before (0 for the first call). */
  readonly call: number
  /** Names of the tools offered. */
  readonly tools: readonly string[]
}

/** A script: a list of replies given in order, or a function of the conversation. */
export type Script = ScriptedReply[] | ((input: ScriptInput) => ScriptedReply)

/**
 * A text adapter that answers from a script instead of a model, on TanStack AI's
 * adapter interface. It streams the same AG-UI events a provider adapter does
 * (text deltas, tool call start/args/end, run finished), so `chat()` and the harness
 * cannot tell it from a real model. Used by the tests and by the checkout app when no
 * API key is set.
 */
export class ScriptedTextAdapter extends BaseTextAdapter<'scripted', Record<string, never>, readonly ['text'], any> {
  readonly name = 'scripted'
  #calls = 0
  /** Every `messages` array the model was asked to continue, for assertions. */
  readonly requests: ModelMessage[][] = []

  constructor(private readonly script: Script) {
    super({}, 'scripted')
  }

  #next(options: TextOptions): ScriptedReply {
    const call = this.#calls++
    this.requests.push(options.messages.map((m) => ({ ...m })))
    if (Array.isArray(this.script)) {
      const reply = this.script[call]
      if (reply === undefined) throw new Error(`The script has ${this.script.length} replies; the model was asked a ${call + 1}th time.`)
      return reply
    }
    return this.script({ messages: options.messages, call, tools: (options.tools ?? []).map((t) => t.name) })
  }

  async *chatStream(options: TextOptions): AsyncGenerator<any> {
    const reply = this.#next(options)
    const { text = '', toolCalls = [] } = typeof reply === 'string' ? { text: reply } : reply
    const runId = crypto.randomUUID()
    const messageId = crypto.randomUUID()
    const threadId = (options as { threadId?: string }).threadId ?? runId
    const base = () => ({ model: this.model, timestamp: Date.now() })
    yield { type: EventType.RUN_STARTED, runId, threadId, ...base() }
    if (text !== '') {
      yield { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', ...base() }
      // Two deltas, so consumers see streaming, not one blob.
      const half = Math.ceil(text.length / 2)
      for (const delta of [text.slice(0, half), text.slice(half)].filter((d) => d !== '')) {
        yield { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, ...base() }
      }
      yield { type: EventType.TEXT_MESSAGE_END, messageId, ...base() }
    }
    for (const [index, call] of toolCalls.entries()) {
      const toolCallId = call.id ?? `call_${crypto.randomUUID().replace(/-/g, '').slice(0, 20)}`
      yield {
        type: EventType.TOOL_CALL_START,
        toolCallId,
        toolCallName: call.name,
        toolName: call.name,
        parentMessageId: messageId,
        index,
        ...base(),
      }
      yield { type: EventType.TOOL_CALL_ARGS, toolCallId, delta: JSON.stringify(call.args), ...base() }
      yield { type: EventType.TOOL_CALL_END, toolCallId, toolCallName: call.name, toolName: call.name, input: call.args, ...base() }
    }
    yield { type: EventType.RUN_FINISHED, runId, threadId, finishReason: toolCalls.length > 0 ? 'tool_calls' : 'stop', ...base() }
  }

  async structuredOutput(options: StructuredOutputOptions<Record<string, never>>): Promise<StructuredOutputResult<unknown>> {
    const reply = this.#next(options.chatOptions)
    const rawText = typeof reply === 'string' ? reply : (reply.text ?? '')
    return { data: JSON.parse(rawText), rawText }
  }
}

/** A scripted model: `scriptedText(['Hello!'])` or `scriptedText(({ messages }) => ...)`. */
export function scriptedText(script: Script): ScriptedTextAdapter {
  return new ScriptedTextAdapter(script)
}

/** The last message of a conversation, for scripts that answer from it. */
export function lastMessage(messages: ReadonlyArray<ModelMessage>): ModelMessage | undefined {
  return messages[messages.length - 1]
}
