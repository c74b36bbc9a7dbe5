import { EventType, type ModelMessage, type TextOptions } from '@tanstack/ai'
import { BaseTextAdapter, type StructuredOutputOptions, type StructuredOutputResult } from '@tanstack/ai/adapters'
import type { Pause } from './pause.js'

/** What the shop's model does next: call the checkout tool, or answer in text. */
export type Move = { call: { orderId: string } } | { text: string; orderId: string | undefined }

/**
 * The shop's model: no key, no network, the same answer for the same conversation (so the
 * worker that resumes a killed turn gets the next move the dead server would have got).
 * It streams its answer a word at a time, as a provider does, with a pause at its middle
 * (`answer:<orderId>`) where the browser test refreshes the page.
 */
export class ShopModel extends BaseTextAdapter<'shop', Record<string, never>, readonly ['text'], any> {
  readonly name = 'shop'

  constructor(
    private readonly pause: Pause,
    private readonly wordMs: number,
  ) {
    super({}, 'shop')
  }

  async *chatStream(options: TextOptions): AsyncGenerator<any> {
    const move = nextMove(options.messages)
    const runId = crypto.randomUUID()
    const messageId = crypto.randomUUID()
    const base = () => ({ model: this.model, timestamp: Date.now() })
    yield { type: EventType.RUN_STARTED, runId, threadId: runId, ...base() }
    if ('call' in move) {
      const toolCallId = `call_${crypto.randomUUID().replace(/-/g, '').slice(0, 20)}`
      const call = { toolCallId, toolCallName: 'checkout', toolName: 'checkout', ...base() }
      yield { type: EventType.TOOL_CALL_START, ...call, parentMessageId: messageId, index: 0 }
      yield { type: EventType.TOOL_CALL_ARGS, toolCallId, delta: JSON.stringify(move.call), ...base() }
      yield { type: EventType.TOOL_CALL_END, ...call, input: move.call }
      yield { type: EventType.RUN_FINISHED, runId, threadId: runId, finishReason: 'tool_calls', ...base() }
      return
    }
    yield { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', ...base() }
    const words = move.text.split(/(?<= )/)
    for (const [index, delta] of words.entries()) {
      if (index === Math.floor(words.length / 2)) await this.pause(`answer:${move.orderId ?? 'none'}`, 0)
      else if (index > 0) await this.pause('word', this.wordMs)
      yield { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta, ...base() }
    }
    yield { type: EventType.TEXT_MESSAGE_END, messageId, ...base() }
    yield { type: EventType.RUN_FINISHED, runId, threadId: runId, finishReason: 'stop', ...base() }
  }

  async structuredOutput(_options: StructuredOutputOptions<Record<string, never>>): Promise<StructuredOutputResult<unknown>> {
    throw new Error('The shop model answers in text only.')
  }
}

/** The order a prompt names: "Check out order 42." → `42`. */
export const orderOf = (prompt: string) => /\border\s+#?([A-Za-z0-9-]+)/i.exec(prompt)?.[1]

/** The answer after a checkout, word for word: what the browser test expects to see once. */
export const paidAnswer = (orderId: string, chargeId: string, invoiceId: string) =>
  `Order ${orderId} is paid with charge ${chargeId}, and invoice ${invoiceId} is on its way to your inbox. Thank you for shopping with us!`

/** The model's next move, from the conversation alone. */
export function nextMove(messages: ReadonlyArray<ModelMessage>): Move {
  const lastUser = messages.findLastIndex((m) => m.role === 'user')
  const orderId = orderOf(lastUser === -1 ? '' : textOf(messages[lastUser]!.content))
  if (!orderId) return { text: 'Tell me which order to check out, for example: "Check out order 42."', orderId }
  const result = messages.slice(lastUser + 1).find((m) => m.role === 'tool')
  if (!result) return { call: { orderId } }
  const value = parse(textOf(result.content))
  if (typeof value?.chargeId !== 'string' || typeof value.invoiceId !== 'string')
    return { text: `Order ${orderId} was not completed: ${textOf(result.content)}`, orderId }
  return { text: paidAnswer(orderId, value.chargeId, value.invoiceId), orderId }
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part) => (typeof part?.content === 'string' ? part.content : (part?.text ?? ''))).join('')
  return content == null ? '' : JSON.stringify(content)
}
