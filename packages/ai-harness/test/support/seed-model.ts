import { type ScriptedTextAdapter, scriptedText } from '@tanstack/ai-harness/testing'

/**
 * A scripted model for the seed's tools: "checkout o1", "notify a@b.c hello" and
 * "remember likes tea" make one tool call; after a tool result it answers in text.
 */
export function seedModel(): ScriptedTextAdapter {
  return scriptedText(({ messages }) => {
    const last = messages[messages.length - 1]
    if (last?.role !== 'user') return 'Done.'
    const [command = '', first = '', ...rest] = String(last.content).split(' ')
    if (command === 'checkout') return { text: 'Placing the order.', toolCalls: [{ name: 'checkout', args: { orderId: first } }] }
    if (command === 'notify') return { toolCalls: [{ name: 'notify', args: { to: first, body: rest.join(' ') } }] }
    if (command === 'remember') return { toolCalls: [{ name: 'remember', args: { fact: [first, ...rest].join(' ') } }] }
    return 'I do not know that command.'
  })
}
