import type { ModelMessage } from '@tanstack/ai'
import { type ScriptedReply, scriptedText, type ScriptedTextAdapter } from '@tanstack/ai-harness/testing'
import { parseOrderPrompt, receiptBody } from './prompt.js'

interface CallSeen {
  name: string
  args: Record<string, unknown>
  /** The parsed tool result; undefined while the call has none. */
  result: Record<string, unknown> | undefined
}

/**
 * The default model: no key, no network. It reads the conversation like a model
 * would and answers from it, never from a counter, so a process that resumes a cut
 * turn from the log gets the same next move as the one that was killed:
 * for each order, `checkout`, then `notify`; then a short answer.
 */
export function scriptedCheckoutModel(): ScriptedTextAdapter {
  return scriptedText(({ messages }) => nextMove(messages))
}

/** The scripted model's reply to a conversation. Exported for tests of the script itself. */
export function nextMove(messages: ReadonlyArray<ModelMessage>): ScriptedReply {
  const lastUser = findLastIndex(messages, (m) => m.role === 'user')
  const prompt = lastUser === -1 ? '' : textOf(messages[lastUser]!.content)
  const request = parseOrderPrompt(prompt)
  if (!request)
    return 'Tell me which order to place and where to email the receipt, e.g. "Place order 42 and email the receipt to ada@example.com."'
  const calls = callsOfTurn(messages.slice(lastUser + 1))
  const lines: string[] = []
  for (const orderId of request.orderIds) {
    const checkout = calls.find((c) => c.name === 'checkout' && c.args.orderId === orderId)
    if (!checkout) return { toolCalls: [{ name: 'checkout', args: { orderId } }] }
    const failed = errorOf(checkout.result)
    if (failed !== undefined) {
      lines.push(`Order ${orderId} was not completed: ${failed}`)
      continue
    }
    const chargeId = String(checkout.result?.chargeId)
    const body = receiptBody(orderId, chargeId)
    const notify = calls.find((c) => c.name === 'notify' && String(c.args.body).includes(`order ${orderId} `))
    if (!notify) return { toolCalls: [{ name: 'notify', args: { to: request.email, body } }] }
    const mailError = errorOf(notify.result)
    lines.push(
      mailError === undefined
        ? `Order ${orderId} is paid (${chargeId}), invoiced, and ${request.email} got the receipt (${String(notify.result?.mailId)}).`
        : `Order ${orderId} is paid (${chargeId}) and invoiced, but the receipt email is unconfirmed, so I did not send it again. The notify tool said: ${mailError}`,
    )
  }
  return lines.join('\n')
}

/** Tool calls of the current turn with their results, in call order. */
function callsOfTurn(turn: ReadonlyArray<ModelMessage>): CallSeen[] {
  const calls = new Map<string, CallSeen>()
  for (const message of turn) {
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) {
        calls.set(call.id, { name: call.function.name, args: parseObject(call.function.arguments) ?? {}, result: undefined })
      }
    } else if (message.role === 'tool' && message.toolCallId) {
      const call = calls.get(message.toolCallId)
      if (call) call.result = parseObject(textOf(message.content)) ?? { error: textOf(message.content) }
    }
  }
  return [...calls.values()]
}

function errorOf(result: Record<string, unknown> | undefined): string | undefined {
  if (!result || result.error === undefined) return undefined
  return typeof result.error === 'string' ? result.error : JSON.stringify(result.error)
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('')
  return content == null ? '' : JSON.stringify(content)
}

function findLastIndex<T>(list: ReadonlyArray<T>, test: (item: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i]!)) return i
  return -1
}
