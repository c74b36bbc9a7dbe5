/**
 * The page's script (bundled by esbuild into dist/public/app.js): TanStack AI's `ChatClient`
 * on `fetchServerSentEvents('/api/chat')`, with `persistence: true`, so the server is the only
 * copy of the conversation. On a refresh the client asks the route for the transcript and
 * the run still going (`GET ?threadId`) and replays that run from its durable stream; when
 * a connection drops mid-answer it re-sends its POST with the last offset it saw
 * (`Last-Event-ID`). The session id is the browser's, kept in localStorage.
 */
import { ChatClient, fetchServerSentEvents, type UIMessage } from '@tanstack/ai-client'

const SESSION_KEY = 'web.sessionId'
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

function sessionId(): string {
  const known = localStorage.getItem(SESSION_KEY)
  if (known) return known
  const made = `web-${crypto.randomUUID()}`
  localStorage.setItem(SESSION_KEY, made)
  return made
}

function element(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag)
  node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

function renderMessages(messages: UIMessage[]): void {
  const list = $('messages')
  list.replaceChildren(
    ...messages.map((message) => {
      const item = element('li', `message ${message.role}`)
      for (const part of message.parts) {
        if (part.type === 'text') item.append(element('p', 'text', part.content))
        if (part.type === 'tool-call') item.append(element('div', 'tool call', `${part.name} ${part.arguments}`))
        if (part.type === 'tool-result') item.append(element('div', 'tool result', `→ ${part.content}`))
      }
      return item
    }),
  )
}

async function renderBilling(): Promise<void> {
  const calls = (await (await fetch('/api/billing')).json()) as Array<Record<string, string>>
  $('billing')
    .querySelector('tbody')!
    .replaceChildren(
      ...calls.map((call) => {
        const row = document.createElement('tr')
        for (const key of ['kind', 'orderId', 'outcome', 'ref', 'pid']) row.append(element('td', call.outcome ?? '', String(call[key])))
        return row
      }),
    )
}

const id = sessionId()
$('session').textContent = id
const client = new ChatClient({
  threadId: id,
  persistence: true,
  connection: fetchServerSentEvents('/api/chat', { reconnect: { maxAttempts: 40, delayMs: 150 } }),
  onMessagesChange: renderMessages,
  onStatusChange: (status) => {
    $('status').textContent = status
    $<HTMLButtonElement>('send').disabled = status === 'submitted' || status === 'streaming'
    if (status === 'ready') void renderBilling()
  },
  onError: (error) => {
    $('status').textContent = `error: ${error.message}`
  },
})
client.attach()
void renderBilling()

$('composer').addEventListener('submit', (event) => {
  event.preventDefault()
  const input = $<HTMLInputElement>('prompt')
  const text = input.value.trim()
  if (text) void client.sendMessage(text)
})
$('new-session').addEventListener('click', () => {
  localStorage.removeItem(SESSION_KEY)
  location.reload()
})
